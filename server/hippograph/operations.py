"""How a declaration of ``api.MemoryAPI`` becomes an operation: its record, argument model and call.

``@operation`` records each declared method in ``OPERATIONS`` (name, docstring, tool metadata,
resolved signature, result type) and replaces its empty body with a call of
``self.call(name, arguments)``. An ``Operation`` parses arguments and results that crossed a
process boundary back to their declared types, and says which arguments it does not take.
``Internal`` marks a parameter that in-process callers may pass but MCP clients never see.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Protocol, TypeVar, get_args, get_origin, get_type_hints

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError, create_model

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

    @property
    def tool_signature(self) -> inspect.Signature:
        """The parameters an MCP client sees: the internal ones left out."""
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
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in err.errors())
            raise InvalidInput(f"{self.name}: {problems}") from None
        return {name: getattr(parsed, name) for name in self.signature.parameters}

    def dump_result(self, result: Any) -> Any:
        """A result as JSON-ready values, for the other side of a process boundary."""
        return self._result.dump_python(result, mode="json")

    def parse_result(self, sent: Any) -> Any:
        """A result that crossed a process boundary, back to its declared type."""
        return self._result.validate_python(sent)


def _shown(name: str) -> str:
    """An argument name as an error may quote it: short, and never a secret."""
    return "(a name holding a secret)" if secrets_scan.scan(name) else repr(name[:60])


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
            p.replace(annotation=hints[p.name]) for p in signature.parameters.values() if p.name != "self"
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
