"""azd's ``ai agent eval`` commands on assay: generate tasks and a rubric for an agent, register
edited ones as new versions, and lint task criteria for consistency."""

# Here rather than in generate.py so the command line can show them without importing the generator.
CATEGORIES = ("happy", "edge", "ambiguous", "out_of_scope", "adversarial", "multi_step")
MIN_SAMPLES, MAX_SAMPLES = 15, 1000
