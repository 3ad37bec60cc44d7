"""azure-ai-evaluation's ``_exceptions`` path, as its samples and users' code import it."""

from assay.azure.exceptions import ErrorBlame, ErrorCategory, ErrorTarget, EvaluationException

__all__ = ["ErrorBlame", "ErrorCategory", "ErrorTarget", "EvaluationException"]
