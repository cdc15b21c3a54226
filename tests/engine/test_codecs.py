"""Registration codecs and Kubernetes quantities: values and exact errors (docs/device-rules.md)."""

from __future__ import annotations

import contextlib
import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hami_sim.engine.annotations import (
    AnnotationError,
    decode_device_json,
    decode_legacy,
    decode_pair_scores,
    encode_device_json,
    encode_legacy,
    parse_cordon,
)
from hami_sim.engine.model import DeviceInfo, InventoryError, MigPlacement
from hami_sim.engine.quantity import QuantityError, as_int64, parse_quantity
from hami_sim.engine.registration_templates import new_templates, using
from hami_sim.engine.simulate import EngineConfig, Simulator
from hami_sim.engine.vendors.nvidia import NvidiaVendor

REG = "hami.io/node-nvidia-register"
SCORE = "hami.io/node-nvidia-score"

# a two-card A10 registration, exactly as Go emits it
EXAMPLE_13 = (
    '[{"id":"GPU-8f3a2b1c-4d5e-6f70-8192-a3b4c5d6e7f8","count":10,"devmem":23028,"devcore":100,'
    '"type":"NVIDIA A10","mode":"hami-core","health":true},'
    '{"id":"GPU-1a2b3c4d-5e6f-7081-92a3-b4c5d6e7f809","index":1,"count":10,"devmem":23028,"devcore":100,'
    '"type":"NVIDIA A10","numa":1,"mode":"hami-core","health":true}]'
)
LEGACY_13 = (
    "GPU-8f3a2b1c-4d5e-6f70-8192-a3b4c5d6e7f8,10,23028,100,NVIDIA A10,0,true,0,hami-core:"
    "GPU-1a2b3c4d-5e6f-7081-92a3-b4c5d6e7f809,10,23028,100,NVIDIA A10,1,true,1,hami-core:"
)
MIG_FIXTURE = (
    '[{"id":"GPU-0","count":7,"devmem":40960,"devcore":100,"type":"NVIDIA-A100-SXM4-40GB","numa":0,"health":true,'
    '"mode":"mig","migProfiles":[{"name":"1g.5gb","memoryMB":5120,"core":14,"sliceCount":1,'
    '"placements":[{"start":6,"size":1}]}]}]'
)


def nvidia_devices(annotations):
    return NvidiaVendor().node_devices(annotations, {"metadata": {"annotations": annotations}})


def nvidia_error(annotations) -> str:
    with pytest.raises(InventoryError) as info:
        nvidia_devices(annotations)
    return str(info.value)


# -- 1.2(a) JSON ------------------------------------------------------------------------------------


def test_example_13_round_trips_byte_for_byte():
    devices = decode_device_json(EXAMPLE_13)
    assert [(d.id[:8], d.index, d.numa, d.devmem, d.health, d.mode) for d in devices] == [
        ("GPU-8f3a", 0, 0, 23028, True, "hami-core"),
        ("GPU-1a2b", 1, 1, 23028, True, "hami-core"),
    ]
    assert encode_device_json(devices) == EXAMPLE_13


def test_omitempty_drops_zero_fields_and_missing_fields_decode_to_zero():
    assert encode_device_json([DeviceInfo(id="GPU-0")]) == '[{"id":"GPU-0"}]'
    [d] = decode_device_json('[{"id":"GPU-0"}]')
    assert (d.index, d.count, d.devmem, d.devcore, d.type, d.numa, d.mode, d.health) == (
        0,
        0,
        0,
        0,
        "",
        0,
        "",
        False,
    )


def test_mig_profiles_decode_and_use_the_compact_wire_form():
    [d] = decode_device_json(MIG_FIXTURE)
    [profile] = d.mig_profiles
    assert (profile.name, profile.memory_mb, profile.core, profile.slice_count) == ("1g.5gb", 5120, 14, 1)
    assert profile.placements == (MigPlacement(6, 1),)
    assert (
        '"migProfiles":[{"name":"1g.5gb","memoryMB":5120,"core":14,"sliceCount":1,"placements":[{"start":6,"size":1}]}]'
        in (encode_device_json([d]))
    )


def test_null_mig_profile_elements_are_zero_values():
    [d] = decode_device_json('[{"id":"g","migProfiles":[null,{"name":"1g.5gb","placements":[null]}]}]')
    assert [p.name for p in d.mig_profiles] == ["", "1g.5gb"]
    assert d.mig_profiles[1].placements == (MigPlacement(0, 0),)


def test_keys_match_case_insensitively_and_unknown_keys_are_ignored():
    [d] = decode_device_json(
        '[{"ID":"GPU-0","Count":4,"DEVMEM":100,"Health":true,"colour":"blue","devicepairscore":{}}]'
    )
    assert (d.id, d.count, d.devmem, d.health) == ("GPU-0", 4, 100, True)


def test_repeated_keys_last_one_wins_and_null_keeps_the_value():
    # Go's decoder assigns every key in order: a later fold of the same field overwrites, null is a no-op
    [d] = decode_device_json('[{"count":1,"COUNT":2,"devmem":5,"DevMem":null}]')
    assert (d.count, d.devmem) == (2, 5)
    [d] = decode_device_json('[{"Count":2,"count":1}]')
    assert d.count == 1


def test_nvidia_sets_vendor_and_attaches_pair_scores():
    devices, scores = nvidia_devices(
        {
            REG: EXAMPLE_13,
            SCORE: '[{"uuid":"GPU-8f3a2b1c-4d5e-6f70-8192-a3b4c5d6e7f8","score":{"GPU-1":100}}]',
        }
    )
    assert {d.device_vendor for d in devices} == {"NVIDIA"}
    assert scores == {"GPU-8f3a2b1c-4d5e-6f70-8192-a3b4c5d6e7f8": {"GPU-1": 100}}


@pytest.mark.parametrize(
    ("value", "detail"),
    [
        ('{"id":"GPU-0"}', "json: cannot unmarshal object into Go value of type []*device.DeviceInfo"),
        ('"GPU-0"', "json: cannot unmarshal string into Go value of type []*device.DeviceInfo"),
        ('[{"id":5}]', "json: cannot unmarshal number into Go struct field DeviceInfo.id of type string"),
        (
            '[{"id":"g","count":"10"}]',
            "json: cannot unmarshal string into Go struct field DeviceInfo.count of type int32",
        ),
        (
            '[{"id":"g","devmem":1.5}]',
            "json: cannot unmarshal number 1.5 into Go struct field DeviceInfo.devmem of type int32",
        ),
        (
            '[{"id":"g","devmem":2147483648}]',
            "json: cannot unmarshal number 2147483648 into Go struct field DeviceInfo.devmem of type int32",
        ),
        (
            '[{"id":"g","index":-1}]',
            "json: cannot unmarshal number -1 into Go struct field DeviceInfo.index of type uint",
        ),
        (
            '[{"id":"g","health":"true"}]',
            "json: cannot unmarshal string into Go struct field DeviceInfo.health of type bool",
        ),
        ("[]", "no gpu found on node"),
        ("null", "no gpu found on node"),
    ],
)
def test_nvidia_json_errors(value, detail):
    assert nvidia_error({REG: value}) == f"malformed {REG}: {detail}"


@pytest.mark.parametrize(
    ("value", "detail"),
    [
        ('[{"id":"GPU-0",', "unexpected end of JSON input"),
        ("", "unexpected end of JSON input"),
        ("not-valid-json", "invalid character 'o' in literal null (expecting 'u')"),
        ("GPU-0,10", "invalid character 'G' looking for beginning of value"),
        ("[1,]", "invalid character ']' looking for beginning of value"),
        ('[{"id" "g"}]', "invalid character '\"' after object key"),
        ('[{"id":"g" "count":1}]', "invalid character '\"' after object key:value pair"),
        ("[{} {}]", "invalid character '{' after array element"),
        ("[{,}]", "invalid character ',' looking for beginning of object key string"),
        ("[] []", "invalid character '[' after top-level value"),
        ('["\\x"]', "invalid character 'x' in string escape code"),
        ('["\\u12g4"]', "invalid character 'g' in \\u hexadecimal character escape"),
        ('["a\tb"]', "invalid character '\\t' in string literal"),
        ("[-]", "invalid character ']' in numeric literal"),
        ("[1.]", "invalid character ']' after decimal point in numeric literal"),
        ("[1e]", "invalid character ']' in exponent of numeric literal"),
        ("[tru]", "invalid character ']' in literal true (expecting 'e')"),
        ("[01]", "invalid character '1' after array element"),
        ("'x'", "invalid character '\\'' looking for beginning of value"),
        ("é", "invalid character 'Ã' looking for beginning of value"),
    ],
)
def test_invalid_json_uses_go_syntax_errors(value, detail):
    assert nvidia_error({REG: value}) == f"malformed {REG}: {detail}"


def test_pre_28_values_are_reported_as_the_legacy_format():
    expected = f"malformed {REG}: pre-2.8 colon-separated format; HAMi 2.8+ reads JSON"
    assert nvidia_error({REG: LEGACY_13}) == expected
    assert nvidia_error({REG: "GPU-0,10,32768,100,NVIDIA-Tesla V100-PCIE-32GB,0,true:"}) == expected


def test_pair_score_errors_name_the_score_annotation():
    message = nvidia_error({REG: EXAMPLE_13, SCORE: "not-valid-json"})
    assert message == f"malformed {SCORE}: invalid character 'o' in literal null (expecting 'u')"
    message = nvidia_error({REG: EXAMPLE_13, SCORE: '{"uuid":"GPU-0"}'})
    assert (
        message
        == f"malformed {SCORE}: json: cannot unmarshal object into Go value of type []*device.DevicePairScore"
    )
    message = nvidia_error({REG: EXAMPLE_13, SCORE: '[{"uuid":"GPU-0","score":{"GPU-1":"x"}}]'})
    assert "cannot unmarshal string" in message


def test_pair_scores_decode():
    assert decode_pair_scores('[{"uuid":"a","score":{"b":100}},{"UUID":"b","Score":{"a":50}}]') == {
        "a": {"b": 100},
        "b": {"a": 50},
    }
    with pytest.raises(AnnotationError):
        decode_pair_scores("[1]")


def test_missing_registration_is_unregistered_in_the_simulator():
    sim = Simulator(EngineConfig(vendors=(NvidiaVendor(),)))
    inventory = sim.annotation_inventory({"metadata": {"name": "n", "annotations": {}}})
    assert inventory.error == "node unregistered"
    assert nvidia_devices({}) == ([], {})


# -- 1.2(b) legacy colon/comma format --------------------------------------------------------------------


def test_legacy_9_field_decodes_and_encodes():
    devices = decode_legacy(LEGACY_13)
    assert [
        (d.id[:8], d.count, d.devmem, d.devcore, d.type, d.numa, d.health, d.index, d.mode) for d in devices
    ] == [
        ("GPU-8f3a", 10, 23028, 100, "NVIDIA A10", 0, True, 0, "hami-core"),
        ("GPU-1a2b", 10, 23028, 100, "NVIDIA A10", 1, True, 1, "hami-core"),
    ]
    assert encode_legacy(devices) == LEGACY_13


def test_legacy_7_field_defaults_mode_and_index():
    [d] = decode_legacy("GPU-0,10,32768,100,NVIDIA-Tesla V100-PCIE-32GB,0,false:")
    assert (d.mode, d.index, d.health) == ("hami-core", 0, False)


def test_legacy_empty_segments_are_skipped():
    assert decode_legacy(":") == []
    assert len(decode_legacy("::GPU-0,10,1,100,T,0,true::")) == 1


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("GPU-0,10,1,100,T,0,true", "node annotation missing device separator"),
        ("GPU-0:", 'malformed node annotation segment: "GPU-0"'),
        ("GPU-0,10,1:", "unexpected field count 3 in node annotation"),
        ("GPU-0,10,1,100,T,0,true,0:", "unexpected field count 8 in node annotation"),
        ("GPU-0,x,1,100,T,0,true:", 'invalid count field: strconv.ParseInt: parsing "x": invalid syntax'),
        (
            "GPU-0,10,1Gi,100,T,0,true:",
            'invalid memory field: strconv.ParseInt: parsing "1Gi": invalid syntax',
        ),
        ("GPU-0,10,1,1.5,T,0,true:", 'invalid core field: strconv.ParseInt: parsing "1.5": invalid syntax'),
        ("GPU-0,10,1,100,T,zero,true:", 'invalid numa field: strconv.Atoi: parsing "zero": invalid syntax'),
        ("GPU-0,10,1,100,T,0,yes:", 'invalid health field: strconv.ParseBool: parsing "yes": invalid syntax'),
        (
            "GPU-0,10,1,100,T,0,true,x,hami-core:",
            'invalid index field: strconv.Atoi: parsing "x": invalid syntax',
        ),
        ("GPU-0,10,1,100,T,0,true,-1,hami-core:", "index field must not be negative: -1"),
        # Go's strconv does not trim or accept underscores; ParseInt(..., 32) bounds count/memory/core
        (
            "GPU-0,2147483648,1,100,T,0,true:",
            'invalid count field: strconv.ParseInt: parsing "2147483648": value out of range',
        ),
        # ParseBool(health) runs before Atoi(numa)
        (
            "GPU-0,10,1,100,T,zero,yes:",
            'invalid health field: strconv.ParseBool: parsing "yes": invalid syntax',
        ),
        ("GPU-0, 10,1,100,T,0,true:", 'invalid count field: strconv.ParseInt: parsing " 10": invalid syntax'),
        ("GPU-0,1_0,1,100,T,0,true:", 'invalid count field: strconv.ParseInt: parsing "1_0": invalid syntax'),
        (
            "GPU-0,10,1,100,T,0, true:",
            'invalid health field: strconv.ParseBool: parsing " true": invalid syntax',
        ),
    ],
)
def test_legacy_decoder_errors(value, message):
    with pytest.raises(AnnotationError) as info:
        decode_legacy(value)
    assert str(info.value) == message


# -- cordon --------------------------------------------------------------------------------------------


def test_cordon_list_is_trimmed_and_empties_ignored():
    assert parse_cordon(" GPU-0 ,, GPU-1,") == frozenset({"GPU-0", "GPU-1"})
    assert parse_cordon("") == frozenset() and parse_cordon(None) == frozenset()


# -- quantities ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("11000", 11000),
        ("16Gi", 17179869184),
        ("16.0Gi", 17179869184),
        ("1e3", 1000),
        ("1k", 1000),
        ("2Mi", 2097152),
        (7, 7),
    ],
)
def test_quantities_parse_exactly(text, value):
    assert as_int64(parse_quantity(text)) == value


def test_fractional_and_out_of_range_quantities_are_not_int64():
    assert as_int64(parse_quantity("500m")) is None
    assert as_int64(parse_quantity("0.5")) is None
    assert as_int64(parse_quantity("16Ei")) is None
    assert as_int64(parse_quantity("1500m")) is None
    assert as_int64(parse_quantity("2000m")) == 2


@pytest.mark.parametrize(
    "text", ["", "abc", "1.2.3", "10 Gi", " 1", "1 ", "Gi", "--1", "1e", "1_000", True, None, [1]]
)
def test_bad_quantities_are_rejected(text):
    with pytest.raises(QuantityError):
        parse_quantity(text)


# -- robustness: any JSON-ish value decodes or fails with a clear reason ------------------------------------


_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "id",
                    "ID",
                    "count",
                    "devmem",
                    "devcore",
                    "type",
                    "numa",
                    "mode",
                    "health",
                    "index",
                    "migProfiles",
                    "placements",
                    "name",
                    "memoryMB",
                    "core",
                    "sliceCount",
                    "start",
                    "size",
                    "custominfo",
                    "uuid",
                    "score",
                    "x",
                ]
            ),
            children,
            max_size=6,
        )
    ),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(value=_json)
def test_any_json_register_value_decodes_or_is_malformed(value):
    import json

    text = json.dumps(value)
    for annos in ({REG: text}, {REG: EXAMPLE_13, SCORE: text}):
        try:
            nvidia_devices(annos)
        except InventoryError as exc:
            assert str(exc).startswith("malformed hami.io/node-nvidia-")


@settings(max_examples=200, deadline=None)
@given(value=st.text(max_size=30) | st.binary(max_size=30).map(lambda b: b.decode("latin-1")))
def test_any_text_register_value_decodes_or_is_malformed(value):
    try:
        nvidia_devices({REG: value})
    except InventoryError as exc:
        assert str(exc).startswith(f"malformed {REG}: ")
    with contextlib.suppress(AnnotationError):
        decode_legacy(value)


_TWIN = '[{"id":"%s","count":10,"devmem":81920,"type":"A100","health":true},{"id":"%s","index":1,"count":10}]'


def _content(device: object) -> tuple:
    """A decoded device's fields (its template reference is not content)."""
    return tuple(getattr(device, f.name) for f in dataclasses.fields(device) if f.compare)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (_TWIN % ("GPU-a0", "GPU-a1"), _TWIN % ("GPU-b0", "GPU-b1")),  # a template's twin: its own UUIDs
        (_TWIN % ("GPU-a0", "GPU-a1"), _TWIN % ("GPU-b0", "GPU-b0")),  # the same UUID twice
        (_TWIN % ("GPU-a0", "GPU-a1"), _TWIN % ("GPU-b0", "")),  # an empty UUID
        (_TWIN % ("GPU-a0", "GPU-a1"), _TWIN % ("GPU-\\u0062", "GPU-b1")),  # an escaped UUID
        (_TWIN % ("GPU-a0", "GPU-a1"), _TWIN % ("GPU-b0", "GPU-b1\\\\")),  # a trailing escape
        (_TWIN % ("GPU-a0", "GPU-a1"), (_TWIN % ("GPU-b0", "GPU-b1")).replace('"count":10}', '"count":1e9}')),
        (_TWIN % ("GPU-a0", "GPU-a1"), (_TWIN % ("GPU-b0", "GPU-b1")).replace("}]", ',"ID":"x"}]')),
        (_TWIN % ("GPU-a0", '","id":"GPU-a2'), _TWIN % ("GPU-b0", '","id":"GPU-b2')),  # a duplicate key
        (_TWIN % ("GPU-a0", "GPU-a1") + " ", _TWIN % ("GPU-b0", "GPU-b1") + " "),
        ("[]", "[]"),
    ],
)
def test_registrations_differing_only_in_uuids_decode_as_if_read_alone(first, second):
    """Templates of one group are decoded once and rebuilt with each node's UUIDs; whatever the
    second registration holds, it decodes (or fails) exactly as it does on its own."""

    def decoded(value: str) -> object:
        try:
            return [_content(d) for d in decode_device_json(value, "NVIDIA")]
        except AnnotationError as exc:
            return str(exc)

    with using(new_templates(1 << 20)):
        alone = decoded(second)
    with using(new_templates(1 << 20)):
        assert decoded(first) == decoded(first)  # the second read of the first may use its template
        assert decoded(second) == alone
