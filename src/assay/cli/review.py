"""``assay review``: put a run's items before people, and read what they said.

``create`` makes a review queue (answered in the web UI of ``assay serve``, at ``/ui/reviews``);
``list`` shows the queues and how far each has got; ``labels`` prints a run's human labels (from
queues and from OpenTelemetry ``gen_ai.evaluation.result`` events) as JSON lines, the format
``assay judges agreement --labels`` reads.
"""

from __future__ import annotations

import json

import click
from rich.table import Table

from assay.cli.common import DEFAULT_PROJECT, dumps, invoked_as, open_store, out


@click.group("review")
def review_group() -> None:
    """Human review: queues of a run's items for people to judge, and their labels."""


@review_group.command("create")
@click.argument("run_id")
@click.option(
    "--reviewer", "reviewers", multiple=True, help="Who reviews (repeat); items are dealt in turn. None: anyone."
)
@click.option(
    "--criterion", "criteria", multiple=True, help="A criterion to judge (repeat); default: every judged one."
)
@click.option("--against", metavar="RUN", help="Pairwise: RUN's output for the same item beside this run's.")
@click.option(
    "--items",
    "which",
    type=click.Choice(["all", "failed", "passed"]),
    default="all",
    show_default=True,
    help="Which of the run's items.",
)
@click.option("--limit", type=click.IntRange(1), help="At most this many items, drawn at random.")
@click.option("--seed", type=int, default=0, show_default=True, help="The draw's and the order's seed.")
@click.option("--name", help="The queue's name.")
def create_command(
    run_id: str,
    reviewers: tuple[str, ...],
    criteria: tuple[str, ...],
    against: str | None,
    which: str,
    limit: int | None,
    seed: int,
    name: str | None,
) -> None:
    """Make a review queue of RUN's items."""
    from assay.api.announce import server_for
    from assay.review.queues import create_queue

    store = open_store()
    run = store.get_run(store.run_id_for(run_id))
    queue = create_queue(
        store,
        run.project or DEFAULT_PROJECT,
        run.id,
        name=name,
        against=store.run_id_for(against) if against else None,
        criteria=list(criteria) or None,
        reviewers=list(reviewers),
        which=which,
        limit=limit,
        seed=seed,
    )
    size = len(store.queue_items(queue["project"], queue["id"]))
    out.print(f"review queue [bold]{queue['id']}[/]: {size} items of {run.id}", soft_wrap=True)
    served = server_for(store.url)
    where = f"{served}/ui/reviews/{queue['id']}" if served else f"{invoked_as()} serve, then /ui/reviews/{queue['id']}"
    out.print(f"answer it at: {where}", soft_wrap=True)


@review_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the queues as JSON.")
def list_command(as_json: bool) -> None:
    """The review queues, with how many items have an answer."""
    from assay.cli.summary import short_id
    from assay.review.queues import answered, progress

    store = open_store()
    rows = []
    for queue in store.list_queues(None):
        entries = progress(store, queue)
        rows.append(
            {
                "id": queue["id"],
                "name": queue["body"]["name"],
                "run_id": queue["body"]["run_id"],
                "mode": queue["body"]["mode"],
                "items": len(entries),
                "answered": answered(entries),
            }
        )
    if as_json:
        out.print_json(dumps(rows))
        return
    table = Table(box=None, pad_edge=False)
    table.add_column("queue", no_wrap=True)  # whole: it is what the UI's address takes
    table.add_column("name", overflow="fold", max_width=28)
    for column in ("run", "kind", "answered"):
        table.add_column(column, no_wrap=True, justify="right" if column == "answered" else "left")
    for row in rows:
        done = f"{row['answered']}/{row['items']}"
        table.add_row(row["id"], row["name"], short_id(row["run_id"]), row["mode"], done)
    out.print(table if rows else "no review queue yet: assay review create RUN")


@review_group.command("labels")
@click.argument("run_id")
def labels_command(run_id: str) -> None:
    """RUN's human labels as JSON lines (what assay judges agreement --labels reads)."""
    from assay.review.labels import labels_for_run

    store = open_store()
    run = store.get_run(store.run_id_for(run_id))
    for (criterion, item), labels in sorted(labels_for_run(store, run).items()):
        for label in labels:
            line = {
                "datasource_item_id": item,
                "criterion": criterion,
                "label": label["label"] if label["passed"] is None else ("pass" if label["passed"] else "fail"),
                "score": label["score"],
                "annotator": label["annotator"],
                "source": label["source"],
                "explanation": label["explanation"],
            }
            click.echo(json.dumps(line, ensure_ascii=False))
