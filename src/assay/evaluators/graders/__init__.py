"""OpenAI's graders: testing criteria with their own ``type`` rather than an evaluator name."""
