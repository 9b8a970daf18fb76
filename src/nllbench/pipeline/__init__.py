"""The pipeline's stages: config validation and rule helpers, file-to-file runs,
aggregation, figures, the report.
"""
