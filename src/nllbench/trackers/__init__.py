"""Scoring any tracker: tidy track tables, fill-ins, adapters for Stone Soup and
MOTChallenge; the trajectory NLL of a labelled tracks table.
"""
