"""azd's ``ai agent eval`` commands on assay: generate tasks and a rubric for an agent, register
edited ones as new versions, and lint task criteria for consistency."""
