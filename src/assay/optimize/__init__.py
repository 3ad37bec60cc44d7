"""``assay optimize``: a GEPA-style search over whole agent configurations, scored by ordinary runs."""
