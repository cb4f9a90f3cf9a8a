"""Frozen dataclasses of plain values, one module per command stem (common.py: what they share): the contract
between the core and output/. The JSON document of a command is its result's to_dict().
"""
