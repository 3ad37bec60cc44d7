"""Reference §2's golden table: numbers measured by running azure-ai-evaluation 1.18."""

# (response, ground_truth, F1, BLEU, GLEU, METEOR, ROUGE-1 F, ROUGE-2 F, ROUGE-L F); None = not measured
GOLDEN = [
    ("The capital of France is Paris.", "Paris", 0.3333, 0.0324, 0.0455, 0.3125, 0.2857, 0, 0.2857),
    ("Paris", "Paris", 1, 1.0, 1.0, 0.5, 1, 0, 1),
    ("The capital of France is Paris.", "The capital of France is Paris.", 1, 1.0, 1.0, 0.9985, 1, 1, 1),
    (
        "Paris is the capital of France.",
        "The capital of France is Paris.",
        1.0,
        0.2296,
        0.4091,
        0.9067,
        1.0,
        0.6,
        0.6667,
    ),
    (
        "The quick brown fox jumps over the lazy dog.",
        "A quick brown dog jumps over the lazy fox.",
        1.0,
        0.3457,
        0.4706,
        0.8228,
        0.8889,
        0.5,
        0.6667,
    ),
    ("I don't know.", "Berlin", 0, 0, 0, 0, 0, 0, 0),
    (
        "Tokyo is the capital city of Japan, and it is huge.",
        "The capital of Japan is Tokyo.",
        0.6667,
        0.0582,
        0.1522,
        0.7532,
        0.7059,
        0.2667,
        0.5882,
    ),
    (
        "It is raining today. Bring an umbrella!",
        "Bring an umbrella; it's raining.",
        0.6,
        0.1642,
        0.2667,
        0.6310,
        0.7692,
        0.3636,
        0.4615,
    ),
    ("The cat sat on the mat.", "The cat is sitting on the mat.", 0.6667, 0.4238, 0.5, 0.8757, 0.7692, 0.5455, 0.7692),
    ("He runs quickly to the store", "He ran fast to the shop", 0.4, 0.1075, 0.2222, 0.625, 0.5, 0.2, 0.5),
    (
        "La capitale de la France est Paris.",
        "Paris est la capitale de la France.",
        1.0,
        0.3976,
        0.5,
        0.9375,
        1.0,
        0.6667,
        0.7143,
    ),
    ("", "Paris", 0, 0, 0, 0, 0, 0, 0),
    ("Hello world", "Hello world", 1.0, 0.2214, 1.0, 0.9375, 1, 1, 1),
    ("the cat was sat on the mat", "the cat sat on the mat", None, 0.4889, 0.5909, 0.9654, None, None, None),
    ("東京は日本の首都です。", "日本の首都は東京です。", 0, 0.0675, 0.3333, 0.25, 0, 0, 0),
    (
        "Café au lait, s'il vous plaît.",
        "Un café au lait s'il vous plaît.",
        0.9231,
        0.6703,
        0.6957,
        0.9209,
        None,
        None,
        0.9412,
    ),
]

EXTRA_F1 = [
    ("The answer is 3.14", "3.14", 0.5),
    ("I don't know", "dont know", 0.8),
    ("An apple a day", "apple day", 1.0),
    ("Paris Paris Paris", "Paris", 0.5),
    ("", "", 0.0),
]

# ROUGE-3/4/5 F for "...lazy dog." vs "...lazy cat."; ROUGE-1 P/R for two rows.
ROUGE_N = [(3, 0.8571), (4, 0.8333), (5, 0.8)]
ROUGE1_PR = [
    ("The capital of France is Paris.", "Paris", 0.1667, 1.0),
    ("Tokyo is the capital city of Japan, and it is huge.", "The capital of Japan is Tokyo.", 0.5455, 1.0),
]
