"""Data mappings: templates that bind item and sample fields to evaluator inputs."""

from assay.mapping.mapping import DataMapping, default_mapping
from assay.mapping.templates import Template, TemplatePath, as_text, parse_path

__all__ = ["DataMapping", "Template", "TemplatePath", "as_text", "default_mapping", "parse_path"]
