"""OpenAPI for the extender verbs, and the error answers of every ``/api/v1`` operation.

The extender verbs are DRF views without a serializer (the hot path parses and encodes once, by
hand), so drf-spectacular cannot describe them: they are excluded from discovery and this
post-processing hook adds them to ``/api/schema/`` with the wire format of
``k8s.io/kube-scheduler/extender/v1`` (Go field names, no JSON tags).
"""

from __future__ import annotations

__all__ = ["add_extender_paths", "add_error_responses", "EXTENDER_COMPONENTS"]

_OBJ = {"type": "object", "additionalProperties": True}

EXTENDER_COMPONENTS = {
    "ExtenderArgs": {
        "type": "object",
        "description": (
            "kube-scheduler ExtenderArgs. Keys are matched case-insensitively (Pod/pod, Nodes/nodes, "
            "NodeNames/nodenames/nodeNames); unknown keys are ignored. filter-simulation needs full Node "
            "objects (nodeCacheCapable: false), so NodeNames must be null or absent."
        ),
        "properties": {
            "Pod": {**_OBJ, "description": "The pending Pod (v1.Pod JSON)."},
            "Nodes": {
                "type": "object",
                "nullable": True,
                "description": "v1.NodeList without apiVersion/kind.",
                "properties": {"metadata": _OBJ, "items": {"type": "array", "items": _OBJ}},
            },
            "NodeNames": {"type": "array", "items": {"type": "string"}, "nullable": True},
        },
        "required": ["Pod", "Nodes"],
    },
    "ExtenderFilterResult": {
        "type": "object",
        "properties": {
            "Nodes": {
                "type": "object",
                "nullable": True,
                "description": "Every input node that fits, echoed unchanged and in input order; null when none fits.",
                "properties": {"metadata": _OBJ, "items": {"type": "array", "items": _OBJ}},
            },
            "NodeNames": {"type": "array", "items": {"type": "string"}, "nullable": True},
            "FailedNodes": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "description": "node -> HAMi reason, e.g. '2/2 CardInsufficientMemory'.",
            },
            "FailedAndUnresolvableNodes": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "description": "node -> why it has no usable inventory ('node unregistered', 'malformed ...').",
            },
            "Error": {"type": "string", "description": "Request-level failure; empty on success."},
        },
        "required": ["Nodes", "NodeNames", "FailedNodes", "FailedAndUnresolvableNodes", "Error"],
    },
    "HostPriority": {
        "type": "object",
        "properties": {"Host": {"type": "string"}, "Score": {"type": "integer", "minimum": 0, "maximum": 10}},
        "required": ["Host", "Score"],
    },
}


def _operation(op_id: str, summary: str, description: str, response: dict, tag: str = "extender") -> dict:
    return {
        "post": {
            "operationId": op_id,
            "summary": summary,
            "description": description,
            "tags": [tag],
            "security": [{}],
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ExtenderArgs"}}},
            },
            "responses": {
                "200": {
                    "description": "Answer (errors are carried in the body, as the extender protocol expects).",
                    "content": {"application/json": {"schema": response}},
                },
                "413": {
                    "description": "Body over EXTENDER_MAX_BODY_BYTES; the same body shape, Error set.",
                    "content": {"application/json": {"schema": response}},
                },
            },
        }
    }


def add_extender_paths(result: dict, generator, request, public) -> dict:
    components = result.setdefault("components", {}).setdefault("schemas", {})
    components.update(EXTENDER_COMPONENTS)
    filter_ref = {"$ref": "#/components/schemas/ExtenderFilterResult"}
    prio = {"type": "array", "items": {"$ref": "#/components/schemas/HostPriority"}}
    paths = result.setdefault("paths", {})
    paths["/filter-simulation"] = _operation(
        "filter_simulation",
        "Filter template nodes with HAMi's device rules",
        "Scheduler-extender filter verb for CA (nodeCacheCapable: false). Never binds, never writes scheduling state.",
        filter_ref,
    )
    paths["/prioritize-simulation"] = _operation(
        "prioritize_simulation",
        "Score fitting template nodes 0..10",
        "round_half_up(HAMi node score after placement / 3), inverted under spread. Errors answer [].",
        prio,
    )
    session_param = [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}]
    for verb, op, response in (
        ("filter-simulation", "session_filter_simulation", filter_ref),
        ("prioritize-simulation", "session_prioritize_simulation", prio),
    ):
        entry = _operation(
            op,
            f"Session-scoped {verb}",
            "The same contract, evaluated against the session's placements.",
            response,
        )
        entry["post"]["parameters"] = session_param
        paths[f"/sessions/{{id}}/{verb}"] = entry
    return result


# -- error responses every REST operation can give ------------------------------------------------------
# drf-spectacular documents the success response only, but DRF answers 400 (validation, bad filter
# values, bad If-Match), 401/403 (writes without credentials), 404 (unknown object), 415 (a body that
# is not JSON) and 429 (throttle), and the body limit answers 413. Clients (and schemathesis) must find them in the schema.
_ERROR_BODY = {
    "type": "object",
    "properties": {"detail": {"type": "string", "description": "what is wrong"}},
    "required": ["detail"],
    "additionalProperties": True,
    "description": (
        "The one error shape of every /api/v1 endpoint (hami_sim.project.rest): {'detail': ...}, plus the "
        "field errors beside it when a request serializer fails ({'detail': ..., '<field>': [...]})."
    ),
}
_ERROR_TEXT = {
    "400": "Invalid request (body, query or header).",
    "401": "Authentication required.",
    "403": "Permission denied.",
    "404": "Not found.",
    "413": "Request body too large.",
    "415": "Unsupported body media type (send application/json).",
    "429": "Throttled.",
}


def add_error_responses(result: dict, generator, request, public) -> dict:
    """Document the 4xx answers of every ``/api/v1/`` operation that does not document them itself."""
    result.setdefault("components", {}).setdefault("schemas", {})["ErrorResponse"] = _ERROR_BODY
    error = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorResponse"}}}}
    for path, item in result.get("paths", {}).items():
        if not path.startswith("/api/v1/"):
            continue
        simulation = path.startswith(("/api/v1/sessions", "/api/v1/estimate"))
        for operation in item.values():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            codes = ["400", "413"]
            if "requestBody" in operation:
                codes.append("415")
            if "{" in path:
                codes.append("404")
            if not simulation:
                codes += ["401", "403", "429"]
            responses = operation["responses"]
            for code in codes:
                responses.setdefault(code, {"description": _ERROR_TEXT[code], **error})
    return result
