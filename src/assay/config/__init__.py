"""Configuration: eval.yaml (``evalyaml``), azd agent configurations (``agents``), the ``ASSAY_*``
environment variables (``settings``) and the bounded YAML reader they share (``yamlfile``). Nothing
is imported here: reading a setting does not load the eval.yaml machinery."""
