"""The run orchestration: every measure of one run at once (``evaluate``), the whole-run sequence
measures (``run_sequence``) and the evaluation presets (``presets``).
"""
