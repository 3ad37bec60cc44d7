"""azure-ai-evaluation's ``_evaluators`` path: the base class users subclass (``_common``)."""
