"""Other tools' formats read and written as assay's: the openai/evals registry (``evals_registry``)."""
