"""Which devices a pod's selection annotations let it use: its UUID lists and card-type lists.

Every backend reads a pair of UUID lists (``<vendor>/use-...uuid`` and ``nouse-...``) and NVIDIA and
Hygon a pair of card-type lists; the annotation names are the backend's, the rules shared. How the
lists are read changed in v2.10 (``HamiRules.uuid_lists_both``, ``type_lists_trimmed``), so a
backend asks ``uuid_check(release)`` or ``type_allows(release, ...)`` for its release's rule.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeAlias

from ..hami_releases import HamiRules

__all__ = [
    "check_uuid",
    "check_type",
    "check_uuid_alone",
    "check_type_untrimmed",
    "UuidCheck",
    "uuid_check",
    "type_allows",
]


def check_uuid(annotations: Mapping[str, str], dev_id: str, use_key: str, nouse_key: str) -> bool:
    """``CheckUUID``: comma lists of exact IDs; an empty or blank value means no constraint."""
    if use_key not in annotations and nouse_key not in annotations:
        return True
    use = annotations.get(use_key, "")
    if use.strip() and dev_id not in {p.strip() for p in use.split(",")}:
        return False
    nouse = annotations.get(nouse_key, "")
    return not (nouse.strip() and dev_id in {p.strip() for p in nouse.split(",")})


def check_type(annotations: Mapping[str, str], card_type: str, use_key: str, nouse_key: str) -> bool:
    """``device.CheckType``: upper-cased substring match of the card type against each listed entry.

    A list constrains when its value is not blank; entries are trimmed and an empty entry matches
    nothing, so a use list made only of commas (``","``) rejects every card, while ``""`` or ``"  "``
    is no constraint.
    """
    upper = card_type.upper()

    def listed(value: str) -> bool:
        return any(entry and entry.upper() in upper for entry in (p.strip() for p in value.split(",")))

    use = annotations.get(use_key)
    if use is not None and use.strip() and not listed(use):
        return False
    nouse = annotations.get(nouse_key)
    return not (nouse is not None and nouse.strip() and listed(nouse))


def check_uuid_alone(annotations: Mapping[str, str], dev_id: str, use_key: str, nouse_key: str) -> bool:
    """``CheckUUID`` before v2.10 (``HamiRules.uuid_lists_both`` false): a present use list alone
    decides and must name the device as written (an empty value names none); else a present nouse
    list must not name it."""
    if use_key in annotations:
        return dev_id in annotations[use_key].split(",")
    if nouse_key in annotations:
        return dev_id not in annotations[nouse_key].split(",")
    return True


def check_type_untrimmed(
    annotations: Mapping[str, str], card_type: str, use_key: str, nouse_key: str, *, use_alone: bool = False
) -> bool:
    """NVIDIA's ``checkGPUtype`` and Hygon's ``checkDCUtype`` before v2.10
    (``HamiRules.type_lists_trimmed`` false): entries as written, upper-cased substrings of the card
    type, so an empty entry (an empty value, a trailing comma) matches every card; a present use
    list must match, then a present nouse list must not (Hygon, ``use_alone``: the use list alone
    when present)."""
    upper = card_type.upper()
    use = annotations.get(use_key)
    if use is not None:
        matched = any(entry.upper() in upper for entry in use.split(","))
        if use_alone or not matched:
            return matched
    nouse = annotations.get(nouse_key)
    return nouse is None or not any(entry.upper() in upper for entry in nouse.split(","))


#: a UUID-list check: (pod annotations, device ID, use key, nouse key) -> the device may be used
UuidCheck: TypeAlias = Callable[[Mapping[str, str], str, str, str], bool]


def uuid_check(release: HamiRules) -> UuidCheck:
    """The UUID-list check of ``release`` (``HamiRules.uuid_lists_both``), one for every backend."""
    return check_uuid if release.uuid_lists_both else check_uuid_alone


def type_allows(
    release: HamiRules,
    annotations: Mapping[str, str],
    card_type: str,
    use_key: str,
    nouse_key: str,
    *,
    use_alone: bool = False,
) -> bool:
    """Whether the card-type lists let a card of ``card_type`` be used under ``release``
    (``HamiRules.type_lists_trimmed``); ``use_alone``: Hygon's older check (the use list alone)."""
    if release.type_lists_trimmed:
        return check_type(annotations, card_type, use_key, nouse_key)
    return check_type_untrimmed(annotations, card_type, use_key, nouse_key, use_alone=use_alone)
