"""Simulated conversations: an LLM plays the user of a scenario against a target."""

from assay.simulate.conversation import Conversation, simulate
from assay.simulate.user import STOP, SimulatedUser, SimulatorError, UserTurn

__all__ = ["STOP", "Conversation", "SimulatedUser", "SimulatorError", "UserTurn", "simulate"]
