"""The SiddhiQL front end: grammar, parser and app model.

``parse(text)`` turns an app into a :class:`~grammar.model.SiddhiApp`; syntax errors raise
:class:`~grammar.errors.SiddhiParserError` with line, column and the expected tokens.
"""
from srota.grammar import errors, model
from srota.grammar.errors import SiddhiAppCreationError, SiddhiParserError
from srota.grammar.parser import parse, parse_expression, parse_on_demand_query, parse_time

__all__ = [
    "errors",
    "model",
    "parse",
    "parse_expression",
    "parse_on_demand_query",
    "parse_time",
    "SiddhiAppCreationError",
    "SiddhiParserError",
]
