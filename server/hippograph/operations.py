"""How a declaration of ``api.MemoryAPI`` becomes an operation: its record, argument model and call.

``@operation`` records each declared method in ``OPERATIONS`` (name, docstring, tool metadata,
resolved signature, result type) and replaces its empty body with a call of
``self.call(name, arguments)``. An ``Operation`` parses arguments and results that crossed a
process boundary back to their declared types, and says which arguments it does not take.
``Internal`` marks a parameter that in-process callers may pass but MCP clients never see.

A parameter declared as a list of strings also takes one string, as a list of it
(``kind="procedure"``); ``Operation.explain_invalid`` words a failed validation for the caller
(argument, what was wrong, what to send), as the MCP tools and the owner's RPC answer it.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import NoneType, UnionType
from typing import Annotated, Any, Literal, Protocol, TypeVar, Union, get_args, get_origin, get_type_hints

from pydantic import BaseModel, BeforeValidator, ConfigDict, TypeAdapter, ValidationError, create_model
from pydantic.fields import FieldInfo

from hippograph.domain import validation as check
from hippograph.domain.errors import InvalidInput
from hippograph.text import secrets_scan

F = TypeVar("F", bound=Callable[..., Any])


class Caller(Protocol):
    """What a declared operation calls: ``api.MemoryAPI.call``."""

    def call(self, name: str, arguments: dict[str, Any]) -> Any: ...


class Internal:
    """Marks a parameter for in-process callers (CLI, explorer, tests), left out of the MCP tool."""


INTERNAL = Internal()


@dataclass(frozen=True)
class Operation:
    """One operation of the API as its declaration states it."""

    name: str
    title: str
    doc: str
    read_only: bool
    destructive: bool
    idempotent: bool
    tool: bool  # offered to MCP clients as a tool
    signature: inspect.Signature  # without self; annotations resolved
    result: Any  # the return type

    @functools.cached_property
    def tool_signature(self) -> inspect.Signature:
        """The parameters an MCP client sees: the internal ones left out (made once: every tool
        call checks its arguments' names against them)."""
        return self.signature.replace(
            parameters=[p for p in self.signature.parameters.values() if not _is_internal(p.annotation)]
        )

    @functools.cached_property
    def _arguments(self) -> type[BaseModel]:
        fields: dict[str, Any] = {
            name: (param.annotation, ... if param.default is inspect.Parameter.empty else param.default)
            for name, param in self.signature.parameters.items()
        }
        return create_model(
            f"{self.name}Arguments",
            __config__=ConfigDict(extra="forbid", arbitrary_types_allowed=True),
            **fields,
        )

    @functools.cached_property
    def _result(self) -> TypeAdapter[Any]:
        return TypeAdapter(self.result)

    def check_names(self, sent: Iterable[str], *, tool: bool = False) -> None:
        """Raise ``InvalidInput`` naming the arguments sent that this operation does not take (as
        an MCP tool: without the internal ones) and listing those it does."""
        accepted = list((self.tool_signature if tool else self.signature).parameters)
        unknown = sorted(set(sent) - set(accepted))
        if unknown:
            plural = "s" if len(unknown) > 1 else ""
            raise InvalidInput(
                f"unknown argument{plural} {', '.join(map(_shown, unknown))} for {self.name}: it takes only "
                f"{', '.join(accepted)}; send the call again without the unknown one{plural}"
            )

    def parse_arguments(self, sent: Mapping[str, Any]) -> dict[str, Any]:
        """Arguments as they crossed a process boundary (JSON), back to their declared types."""
        self.check_names(sent)
        try:
            parsed = self._arguments.model_validate(dict(sent))
        except ValidationError as err:
            raise InvalidInput(f"{self.name}: {self.explain_invalid(err)}") from None
        return {name: getattr(parsed, name) for name in self.signature.parameters}

    def explain_invalid(self, err: ValidationError) -> str:
        """Why arguments failed validation against this declaration, in hippograph's words: for
        each argument what was wrong and what to send, its value quoted short (no pydantic
        text, no links)."""
        problems: list[str] = []
        for error in err.errors(include_url=False)[:_PROBLEMS_SHOWN]:
            loc = error.get("loc", ())
            name = str(loc[0]) if loc else "arguments"
            param = self.signature.parameters.get(name)
            about = _description(param.annotation) if param is not None else ""
            problem = _problem(name, loc, error, param.annotation if param is not None else Any)
            problems.append(f"{problem}. {name}: {about.rstrip('.')}" if about else problem)
        return "; ".join(problems)

    def dump_result(self, result: Any) -> Any:
        """A result as JSON-ready values, for the other side of a process boundary."""
        return self._result.dump_python(result, mode="json")

    def parse_result(self, sent: Any) -> Any:
        """A result that crossed a process boundary, back to its declared type."""
        return self._result.validate_python(sent)


_PROBLEMS_SHOWN = 3  # most invalid arguments one error names

# What a value must be, by the kind of pydantic error it failed with.
_EXPECTED = {
    "string": "text (a JSON string)",
    "int": "a whole number",
    "float": "a number",
    "bool": "true or false (a JSON boolean)",
    "list": "a list (a JSON array)",
    "dict": "an object (a JSON object)",
    "datetime": "a date and time, ISO 8601",
}


def _shown(name: str) -> str:
    """An argument name as an error may quote it: short, and never a secret."""
    return "(a name holding a secret)" if secrets_scan.scan(name) else check.shown(name)


def _problem(name: str, loc: tuple[Any, ...], error: Any, annotation: Any) -> str:
    """One failed argument, in words: ``tags[1] must be text (a JSON string), not the number 3``."""
    path = name + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc[1:])
    kind, value = error["type"], error.get("input")
    if kind == "missing":
        return f"{name} is missing: send it"
    if kind == "literal_error":
        values = _literal_values(annotation)
        listed = check.listed(values) if values else error.get("ctx", {}).get("expected", "")
        return f"{path} {check.shown(value)} is not known: use one of {listed}"
    expected = next((what for prefix, what in _EXPECTED.items() if kind.startswith(prefix)), None)
    if expected is None:
        return f"{path} {check.shown(value)} is not valid"
    problem = f"{path} must be {expected}, not {_got(value)}"
    return f"{problem}: send true or false" if kind.startswith("bool") else problem


def _got(value: Any) -> str:
    """What was sent, as an error names it: its JSON type, and the value quoted short."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"the text {check.shown(value)}"
    if isinstance(value, int | float):
        return f"the number {check.shown(value)}"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return f"a {type(value).__name__}"


def _description(annotation: Any) -> str:
    """The description a declaration gives its parameter (``Field(description=...)``), if any."""
    if get_origin(annotation) is not Annotated:
        return ""
    return next(
        (m.description for m in get_args(annotation)[1:] if isinstance(m, FieldInfo) and m.description), ""
    )


def _bare(annotation: Any) -> list[Any]:
    """The types an annotation allows, without ``Annotated`` metadata and without None."""
    if get_origin(annotation) is Annotated:
        return _bare(get_args(annotation)[0])
    if get_origin(annotation) in (Union, UnionType):
        return [t for arg in get_args(annotation) for t in _bare(arg)]
    return [] if annotation is NoneType else [annotation]


def _literal_values(annotation: Any) -> list[str]:
    """The values a ``Literal`` in ``annotation`` (or in the list it declares) allows."""
    for bare in _bare(annotation):
        if get_origin(bare) is Literal:
            return [str(v) for v in get_args(bare)]
        if get_origin(bare) is list:
            found = _literal_values(get_args(bare)[0])
            if found:
                return found
    return []


def _is_list_of_words(annotation: Any) -> bool:
    """Whether a parameter is declared as a list of strings (or of names a ``Literal`` allows)."""
    bare = _bare(annotation)
    return len(bare) == 1 and get_origin(bare[0]) is list and _is_word(get_args(bare[0])[0])


def _is_word(item: Any) -> bool:
    return item is str or (get_origin(item) is Literal and all(isinstance(v, str) for v in get_args(item)))


def _one_as_list(value: Any) -> Any:
    """One string sent where a list of them is declared, as the list of it: ``kind="procedure"``
    means ``kind=["procedure"]``."""
    return [value] if isinstance(value, str) else value


def _accepting_one(annotation: Any) -> Any:
    """A list-of-strings parameter's annotation, made to take a single string as a list of one."""
    return (
        Annotated[annotation, BeforeValidator(_one_as_list)] if _is_list_of_words(annotation) else annotation
    )


def _is_internal(annotation: Any) -> bool:
    return get_origin(annotation) is Annotated and any(
        isinstance(m, Internal) for m in get_args(annotation)[1:]
    )


OPERATIONS: dict[str, Operation] = {}


def operation(
    *,
    title: str = "",
    read_only: bool = False,
    destructive: bool = False,
    idempotent: bool = False,
    tool: bool = True,
) -> Callable[[F], F]:
    """Declare an API operation: record it in ``OPERATIONS`` and make the method call ``self.call``."""

    def declare(fn: F) -> F:
        signature = inspect.signature(fn)
        hints = get_type_hints(fn, include_extras=True)
        params = [
            p.replace(annotation=_accepting_one(hints[p.name]))
            for p in signature.parameters.values()
            if p.name != "self"
        ]
        OPERATIONS[fn.__name__] = Operation(
            name=fn.__name__,
            title=title,
            doc=inspect.cleandoc(fn.__doc__ or ""),
            read_only=read_only,
            destructive=destructive,
            idempotent=idempotent,
            tool=tool,
            signature=signature.replace(parameters=params, return_annotation=hints["return"]),
            result=hints["return"],
        )

        @functools.wraps(fn)
        def call(self: Caller, *args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(self, *args, **kwargs)
            bound.apply_defaults()
            arguments = dict(bound.arguments)
            del arguments["self"]
            return self.call(fn.__name__, arguments)

        return call  # type: ignore[return-value]

    return declare
