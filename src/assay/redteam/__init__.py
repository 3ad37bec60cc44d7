"""Red teaming: attack plans, converters and multi-turn attackers played against a target, and their judging."""
