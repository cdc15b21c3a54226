"""HAMi's reason strings and their aggregation (``pkg/device/common/common.go``)."""

from __future__ import annotations

__all__ = [
    "CARD_TYPE_MISMATCH",
    "CARD_UUID_MISMATCH",
    "CARD_TIME_SLICING_EXHAUSTED",
    "CARD_COMPUTE_UNITS_EXHAUSTED",
    "CARD_INSUFFICIENT_MEMORY",
    "CARD_INSUFFICIENT_CORE",
    "CARD_NOT_HEALTH",
    "CARD_CORDONED",
    "NUMA_NOT_FIT",
    "EXCLUSIVE_DEVICE_ALLOCATE_CONFLICT",
    "CARD_NOT_FOUND_CUSTOM_FILTER_RULE",
    "CARD_MIG_TOPOLOGY_INFEASIBLE",
    "NODE_INSUFFICIENT_DEVICE",
    "ALLOCATED_CARDS_INSUFFICIENT_REQUEST",
    "RESOURCE_QUOTA_NOT_FIT",
    "MODE_NOT_FIT",
    "NODE_UNREGISTERED",
    "DEVICE_TYPE_NOT_FOUND",
    "gen_reason",
    "parse_reason",
]

CARD_TYPE_MISMATCH = "CardTypeMismatch"
CARD_UUID_MISMATCH = "CardUuidMismatch"  # sic: HAMi's constant CardUUIDMismatch has this value
CARD_TIME_SLICING_EXHAUSTED = "CardTimeSlicingExhausted"
CARD_COMPUTE_UNITS_EXHAUSTED = "CardComputeUnitsExhausted"
CARD_INSUFFICIENT_MEMORY = "CardInsufficientMemory"
CARD_INSUFFICIENT_CORE = "CardInsufficientCore"
CARD_NOT_HEALTH = "CardNotHealth"
CARD_CORDONED = "CardCordoned"
NUMA_NOT_FIT = "NumaNotFit"
EXCLUSIVE_DEVICE_ALLOCATE_CONFLICT = "ExclusiveDeviceAllocateConflict"
CARD_NOT_FOUND_CUSTOM_FILTER_RULE = "CardNotFoundCustomFilterRule"
CARD_MIG_TOPOLOGY_INFEASIBLE = "CardMigTopologyInfeasible"
NODE_INSUFFICIENT_DEVICE = "NodeInsufficientDevice"
ALLOCATED_CARDS_INSUFFICIENT_REQUEST = "AllocatedCardsInsufficientRequest"
RESOURCE_QUOTA_NOT_FIT = "ResourceQuotaNotFit"
MODE_NOT_FIT = "ModeNotFit"
NODE_UNREGISTERED = "node unregistered"
DEVICE_TYPE_NOT_FOUND = "Device type not found"


def gen_reason(counts: dict[str, int], total: int) -> str:
    """``GenReason``: ``"<c>/<m> <Reason>"`` per reason, sorted as whole strings, joined by ``", "``.

    The sort is over the whole string (Go ``sort.Strings``), so ``"10/12 X"`` sorts before ``"2/12 Y"``.
    """
    return ", ".join(sorted(f"{count}/{total} {reason}" for reason, count in counts.items()))


def parse_reason(text: str) -> dict[str, int]:
    """``ParseReason``: ``{"Reason": count}`` from a GenReason string; unparseable parts are skipped."""
    out: dict[str, int] = {}
    for part in text.split(", "):
        head, _, reason = part.partition(" ")
        count, slash, _total = head.partition("/")
        if slash and count.isdigit() and reason:
            out[reason] = out.get(reason, 0) + int(count)
    return out
