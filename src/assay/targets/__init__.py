"""Targets: generate a sample (what a model or agent answered) for each item before it is evaluated."""

from assay.targets.base import Target, TargetSpec, build_target
from assay.targets.messages import render_input_messages

__all__ = ["Target", "TargetSpec", "build_target", "render_input_messages"]
