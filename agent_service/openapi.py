"""The OpenAPI 3.1 description of the agent protocol, generated from :mod:`agent_service.protocol`'s
messages (``docs/agent_openapi.json`` is its published copy; a test keeps them equal).

    python -m agent_service.openapi > docs/agent_openapi.json
"""
from __future__ import annotations

import dataclasses
import json
import typing
from typing import Any

from agent_service.protocol import ENDPOINTS, MAX_BODY_BYTES, PROTOCOL_VERSION, field_types

_SCALARS = {bool: "boolean", int: "integer", float: "number", str: "string"}


def _schema(hint: Any) -> dict[str, Any]:
    if hint is Any:
        return {}
    origin = typing.get_origin(hint) or hint
    if origin is dict:
        return {"type": "object"}
    if origin is list:
        item = typing.get_args(hint)[0]
        return {"type": "array", "items": _schema(item)}
    return {"type": _SCALARS[hint]}


def message_schema(cls: type) -> dict[str, Any]:
    """The JSON schema of message ``cls``: its fields, their types, descriptions and bounds."""
    properties: dict[str, Any] = {}
    required = []
    for f in dataclasses.fields(cls):
        hint, nullable = field_types(cls)[f.name]
        schema = _schema(hint)
        if nullable:
            schema = {"anyOf": [schema, {"type": "null"}]} if schema else {}
        bound = f.metadata.get("max_length")
        if bound is not None:
            schema["maxLength" if hint is str else "maxItems"] = bound
        properties[f.name] = {**schema, "description": f.metadata["doc"]}
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            required.append(f.name)
    return {"type": "object", "description": (cls.__doc__ or "").strip(), "properties": properties,
            "required": required}


def openapi() -> dict[str, Any]:
    """The protocol as an OpenAPI 3.1 document."""
    schemas: dict[str, Any] = {"Error": {"type": "object", "description": "A refused request, in one line.",
                                         "properties": {"error": {"type": "string"}}, "required": ["error"]}}
    paths: dict[str, Any] = {}
    for path, (method, request, answer) in ENDPOINTS.items():
        operation: dict[str, Any] = {}
        if request is not None:
            schemas[request.__name__] = message_schema(request)
            operation["requestBody"] = {"required": True, "content": {"application/json": {
                "schema": {"$ref": f"#/components/schemas/{request.__name__}"}}}}
        if answer is dict:
            ok: dict[str, Any] = {"type": "object", "description": "any JSON object (its content is ignored)"}
        else:
            schemas[answer.__name__] = message_schema(answer)
            ok = {"$ref": f"#/components/schemas/{answer.__name__}"}
        error = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
        operation["responses"] = {
            "200": {"description": "the answer", "content": {"application/json": {"schema": ok}}},
            "400": {"description": "a malformed request (not retried)", **error},
            "409": {"description": "an unknown or finished session (the agent lost it: the run stops)", **error},
            "422": {"description": "the agent cannot play this seat (its own fault: the run stops, and playing "
                                   "again fails the same way)", **error},
            "5XX": {"description": "a passing failure (retried with backoff)"}}
        paths[path] = {method.lower(): operation}
    return {
        "openapi": "3.1.0",
        "info": {"title": "arena_envs agent protocol", "version": str(PROTOCOL_VERSION),
                 "description": f"What the arena sends an agent service and takes back (docs/agents.md). Bodies are "
                                f"UTF-8 JSON of at most {MAX_BODY_BYTES} bytes; an optional bearer token."},
        "paths": paths,
        "components": {"schemas": schemas,
                       "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
    }


def openapi_json() -> str:
    """:func:`openapi` as the text of ``docs/agent_openapi.json``."""
    return json.dumps(openapi(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    print(openapi_json(), end="")
