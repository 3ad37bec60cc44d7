"""Synthetic support-agent traffic for bench/sampling.py: conversations the way users write them.

About 300 phrasings of 40 intents, drawn with Zipf weights (a few intents dominate, as in real
traffic), with slot values (orders, products, cities, dates), typos, and the noise a sampler must
remove: exact repeats, greetings, and failed turns.
"""

from __future__ import annotations

import random

INTENTS = {
    "track": [
        "where is my order {order}",
        "has order {order} shipped yet",
        "tracking for {order} please",
        "my {product} from order {order} has not arrived",
        "when will {order} be delivered to {city}",
    ],
    "refund": [
        "i want a refund for the {product}",
        "how do refunds work for {product}",
        "can i get my money back for order {order}",
        "refund status for {order}?",
    ],
    "return": [
        "how do i return a {product}",
        "the {product} is broken, can i send it back",
        "return label for order {order}",
        "is there a fee to return {product}",
    ],
    "cancel": [
        "cancel order {order}",
        "please cancel my {product} order",
        "can i still cancel {order} before it ships",
    ],
    "address": [
        "change the delivery address of {order} to {city}",
        "i moved to {city}, update my address",
        "wrong address on order {order}",
    ],
    "payment": [
        "i was charged twice for {order}",
        "my card was declined",
        "can i pay with paypal",
        "why is there a pending charge of {amount}",
    ],
    "account": ["i can't log in", "reset my password", "how do i delete my account", "change my email to {email}"],
    "stock": ["is the {product} in stock", "when will {product} be available again", "do you have {product} in blue"],
    "shipping": ["do you ship to {city}", "how much is shipping to {city}", "express delivery to {city} by {date}?"],
    "warranty": ["what warranty does the {product} have", "my {product} stopped working after {months} months"],
    "discount": ["do you have a discount code", "student discount?", "the code {code} does not work"],
    "invoice": ["send me the invoice for {order}", "i need a vat invoice for {order}"],
    "damaged": ["the {product} arrived damaged", "box was crushed and the {product} is scratched"],
    "size": ["what size {product} should i get", "does the {product} run small"],
    "gift": ["can i add a gift note to {order}", "gift wrap for the {product}?"],
    "human": ["let me talk to a person", "i want a human agent now", "this bot is useless, escalate"],
    "hours": ["what are your opening hours in {city}", "is the {city} store open on sunday"],
    "bulk": ["i need 50 {product} for my office", "do you offer bulk pricing on {product}"],
    "compare": [
        "what's the difference between the {product} and the {product2}",
        "{product} or {product2}, which is better",
    ],
    "recycle": ["do you take back old {product} for recycling"],
}
for i in range(20):  # rarer, specific intents: the long tail random sampling misses
    INTENTS[f"niche{i}"] = [
        f"question about {{product}} feature {i}: does it support mode {i * 7}",
        f"firmware {i}.{i + 2} for {{product}} fails with error E{100 + i}",
    ]
PRODUCTS = [
    "kettle",
    "desk lamp",
    "headphones",
    "blender",
    "office chair",
    "monitor",
    "keyboard",
    "backpack",
    "rain jacket",
    "coffee grinder",
    "toaster",
    "e-reader",
    "speaker",
    "air fryer",
    "yoga mat",
]
CITIES = ["paris", "oslo", "lisbon", "toronto", "austin", "osaka", "nairobi", "lima", "gdansk", "porto"]
TRIVIAL = ["hi", "hello", "thanks", "ok", "?"]


def _fill(template: str, rng: random.Random) -> str:
    text = template.format(
        order=f"#{rng.randint(1000, 99999)}",
        product=rng.choice(PRODUCTS),
        product2=rng.choice(PRODUCTS),
        city=rng.choice(CITIES),
        date=f"dec {rng.randint(1, 28)}",
        amount=f"${rng.randint(5, 500)}",
        email=f"user{rng.randint(1, 999)}@mail.com",
        months=rng.randint(2, 30),
        code=f"SAVE{rng.randint(5, 50)}",
    )
    if rng.random() < 0.15:  # a typo
        at = rng.randrange(len(text))
        text = text[:at] + text[at + 1 :]
    return text


def conversations(count: int, seed: int = 7) -> list[dict]:
    """``[{key, turns: [user text, ...], problems: [...]}]``, with repeats, greetings and failures mixed in."""
    rng = random.Random(seed)
    names = sorted(INTENTS)
    weights = [1 / (rank + 1) ** 1.1 for rank in range(len(names))]
    rng.shuffle(weights)
    out: list[dict] = []
    for index in range(count):
        roll = rng.random()
        if roll < 0.08 and out:
            turns = list(rng.choice(out)["turns"])  # the same conversation again, word for word
        elif roll < 0.11:
            turns = [rng.choice(TRIVIAL)]
        else:
            intents = rng.choices(names, weights, k=rng.choice((1, 1, 1, 2, 3)))
            turns = [_fill(rng.choice(INTENTS[i]), rng) for i in intents]
        problems = ["error status: upstream timeout"] if rng.random() < 0.02 else []
        out.append({"key": f"conv-{index}", "turns": turns, "problems": problems})
    return out
