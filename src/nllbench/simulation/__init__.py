"""Scenarios (truth and measurements) and the motion and measurement models."""
