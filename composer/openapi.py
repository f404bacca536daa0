"""What each route of the `api` target declares (`Route`), and the OpenAPI 3.1 document
built from those declarations: `GET /openapi.json`.

Every schema in the document comes from a pydantic model: bodies in validation mode (what a
request may send), answers in serialization mode (what the serializers emit), query
parameters from each route's query model, the error body from `core.http.ErrorBody`. The
router dispatches on the same `Route`s, so a route cannot exist undescribed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Annotated, Any

from pydantic import BaseModel, Field, TypeAdapter
from pydantic.json_schema import JsonSchemaMode, models_json_schema

from composer.idempotency import HEADER as IDEMPOTENCY_KEY
from composer.idempotency import MAX_KEY_LENGTH
from composer.versions import IF_MATCH, VERSION_TAG
from core.http import ErrorBody

_REF = "#/components/schemas/{model}"
# A path parameter: one segment (a `/` would make it another path).
_ID_PARAMETER = "id"
_SEGMENT = r"(?P<ident>[^/]+)"


class NoQuery(BaseModel):
    """A route that takes no query parameters."""


@dataclass(frozen=True)
class Route:
    """One route: how it is matched and handled, and everything the document says of it.
    `errors` are the 4xx statuses it can answer besides the 401 and the 422 (an unknown
    query parameter) that every route can."""

    method: str
    path: str  # `/messages/{id}`: `{id}` is one path segment
    handler: Callable[..., tuple[Any, int]]
    summary: str
    answer: type[BaseModel]
    status: int = 200
    body: type[BaseModel] | None = None
    body_required: bool = True
    query: type[BaseModel] = NoQuery
    headers: tuple[str, ...] = ()
    errors: tuple[int, ...] = ()
    # Other success statuses answered with the same model (`POST /events`: 200, a duplicate).
    also: tuple[int, ...] = ()
    pattern: re.Pattern[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        regex = re.escape(self.path).replace(re.escape(f"{{{_ID_PARAMETER}}}"), _SEGMENT)
        object.__setattr__(self, "pattern", re.compile(regex))

    def match(self, path: str) -> dict[str, str] | None:
        found = self.pattern.fullmatch(path)
        return None if found is None else found.groupdict()


# Headers some routes take, each with the schema its parser accepts.
_HEADERS: dict[str, tuple[str, Any]] = {
    IF_MATCH: (
        'the `version` the change was based on (`3`, `"3"` or `W/"3"`); 412 if it is stale',
        TypeAdapter(Annotated[str, Field(pattern=VERSION_TAG.pattern)]),
    ),
    IDEMPOTENCY_KEY: (
        "a retry with the same key and body answers the record the first request made",
        TypeAdapter(
            Annotated[
                str,
                Field(min_length=1, max_length=MAX_KEY_LENGTH, pattern=r"^[\x20-\x7e]+$"),
            ]
        ),
    ),
}
# `If-Match` from an answer's `version`, as the entity tag `"3"`: a header is a string, and
# an expression embedded in a string (OpenAPI 3.1, "Runtime Expressions") yields one; the bare
# `$response.body#/version` would yield the integer itself.
_VERSION_AS_TAG = '"{$response.body#/version}"'
_ID_SCHEMA = TypeAdapter(Annotated[str, Field(min_length=1, pattern=r"^[^/]+$")])

_ERROR_MEANING = {
    400: "the body is not a JSON object, or a header is malformed",
    401: "missing or bad credentials; nothing happened",
    404: "no record with this id",
    409: "the record's status forbids this change right now",
    412: "If-Match is not the record's current version",
    422: "named fields, query parameters or headers are invalid",
    502: "Slack refused the request (its code in details); nothing was recorded",
    503: "Slack refused for now; nothing was done, the same request may be made again",
}


@cache
def document(routes: tuple[Route, ...]) -> dict[str, Any]:
    """The OpenAPI 3.1 document of `routes`."""
    models: list[tuple[type[BaseModel], JsonSchemaMode]] = [(ErrorBody, "serialization")]
    for route in routes:
        models.append((route.answer, "serialization"))
        if route.body is not None:
            models.append((route.body, "validation"))
    refs, definitions = models_json_schema(models, ref_template=_REF)
    paths: dict[str, dict[str, Any]] = {}
    for route in routes:
        operation = _operation(route, refs)
        links = _links(route, routes)
        if links:
            for status in (route.status, *route.also):
                operation["responses"][str(status)]["links"] = links
        paths.setdefault(route.path, {})[route.method.lower()] = operation
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Scheduled messages for Slack: the api target",
            "version": "1",
            "description": "Generated from the pydantic models the API validates and answers "
            "with (docs/api.md).",
        },
        "paths": paths,
        "components": {
            "schemas": definitions.get("$defs", {}),
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "ADMIN_TOKEN, or a Google-signed ID token (docs/api.md)",
                }
            },
        },
        "security": [{"bearer": []}],
    }


def _operation(route: Route, refs: dict[tuple[Any, JsonSchemaMode], Any]) -> dict[str, Any]:
    operation: dict[str, Any] = {
        "operationId": _operation_id(route),
        "summary": route.summary,
        "parameters": _parameters(route),
        "responses": {
            **{
                str(status): _json_content(
                    route.answer.__doc__ or "", refs[(route.answer, "serialization")]
                )
                for status in (route.status, *route.also)
            },
            **{
                str(status): _json_content(
                    _ERROR_MEANING[status], refs[(ErrorBody, "serialization")]
                )
                for status in sorted({401, 422, *route.errors})
            },
        },
    }
    if route.body is not None:
        operation["requestBody"] = {
            "required": route.body_required,
            **_json_content("", refs[(route.body, "validation")]),
        }
    return operation


def _links(route: Route, routes: tuple[Route, ...]) -> dict[str, Any]:
    """The OpenAPI links of `route`'s answer, the flows a client (and schemathesis' stateful
    phase) follows: from a record to every operation on it (its `id`, and its `version` as
    `If-Match`), and from a page to the next one of the same listing (`next_cursor`, with the
    request's own filters and `limit`)."""
    answer = route.answer.model_fields
    if "id" in answer:
        ident = "$response.body#/id"
    elif f"{{{_ID_PARAMETER}}}" in route.path:
        ident = "$request.path.id"
    else:
        ident = None
    prefix = route.path.split(f"/{{{_ID_PARAMETER}}}")[0] + f"/{{{_ID_PARAMETER}}}"
    links: dict[str, Any] = {}
    for other in routes if ident is not None else ():
        if other is route or not other.path.startswith(prefix):
            continue
        parameters = {_ID_PARAMETER: ident}
        if IF_MATCH in other.headers and "version" in answer:
            parameters[f"header.{IF_MATCH}"] = _VERSION_AS_TAG
        links[_operation_id(other)] = {
            "operationId": _operation_id(other),
            "parameters": parameters,
        }
    if "cursor" in route.query.model_fields and "next_cursor" in answer:
        following = {
            name: f"$request.query.{name}" for name in route.query.model_fields if name != "cursor"
        }
        following["cursor"] = "$response.body#/next_cursor"
        if f"{{{_ID_PARAMETER}}}" in route.path:
            following[_ID_PARAMETER] = "$request.path.id"
        links["next_page"] = {"operationId": _operation_id(route), "parameters": following}
    return links


def _parameters(route: Route) -> list[dict[str, Any]]:
    parameters: list[dict[str, Any]] = []
    if f"{{{_ID_PARAMETER}}}" in route.path:
        parameters.append(
            {
                "name": _ID_PARAMETER,
                "in": "path",
                "required": True,
                "schema": _ID_SCHEMA.json_schema(),
            }
        )
    query = route.query.model_json_schema(mode="validation")
    for name, schema in query.get("properties", {}).items():
        parameters.append(
            {
                "name": name,
                "in": "query",
                "required": name in query.get("required", ()),
                "schema": _absent_not_null(schema),
            }
        )
    for name in route.headers:
        description, adapter = _HEADERS[name]
        parameters.append(
            {
                "name": name,
                "in": "header",
                "required": False,
                "description": description,
                "schema": adapter.json_schema(),
            }
        )
    return parameters


def _absent_not_null(schema: dict[str, Any]) -> dict[str, Any]:
    """A query parameter's schema without the `null` its optional field allows: a query
    parameter is left out, never null."""
    branches: list[dict[str, Any]] = [
        branch for branch in schema.get("anyOf", ()) if branch != {"type": "null"}
    ]
    if len(branches) != 1:
        return schema
    rest = {key: value for key, value in schema.items() if key not in ("anyOf", "default")}
    return rest | branches[0]


def _json_content(description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _operation_id(route: Route) -> str:
    words = re.findall(r"[a-z]+", route.path.replace(f"{{{_ID_PARAMETER}}}", "by_id"))
    return "_".join([route.method.lower(), *words])
