"""Human review: labels people (or other systems) give results, the queues they review in, and
the ``gen_ai.evaluation.result`` events labels and verdicts travel as."""
