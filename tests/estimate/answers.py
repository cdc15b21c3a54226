"""Reading ``POST /api/v1/estimate``'s compact answer back: pod lists are runs ``[first, count]`` of the
answer's ``pods`` (request order), unschedulable pods one entry per reason."""

from __future__ import annotations


def ids(answer: dict, runs: list[list[int]]) -> list[str]:
    """The pod ids ``runs`` stand for, in order."""
    pods = answer["pods"]
    return [pods[i] for first, count in runs for i in range(first, first + count)]


def scheduled(answer: dict, option: dict) -> list[str]:
    """An option's scheduled pod ids, in placement order."""
    return ids(answer, option["scheduledPods"])


def unschedulable(answer: dict, option: dict) -> dict[str, str]:
    """An option's unschedulable pods: ``{pod id: reason}``."""
    return {
        pid: entry["reason"] for entry in option["unschedulablePods"] for pid in ids(answer, entry["pods"])
    }


def node_pods(answer: dict, node: dict) -> list[str]:
    """A new (or upcoming) node's pod ids, in placement order."""
    return ids(answer, node["pods"])
