"""HAMi v2.8.3's Go test cases that read exactly as at v2.10.0 (the table row and the assertions
after the table), replayed from the v2.10.0 tables under the 2.8 rules (``tests/vendors/unchanged.py``).

The case lists were read from HAMi's sources at both tags, case by case; a case that changed
between the tags (a device given ``Health: true`` in v2.10.0, a new expectation) is not here but in
this folder's own tables, or not ported.
"""

from __future__ import annotations

import pytest

from tests.vendors.unchanged import replay, replay_cases

UNCHANGED = {
    "test_cambricon": (
        "pkg/device/cambricon/device_test.go",
        (
            "Test_GenerateResourceRequests/don't set to limits and request",
            "Test_GenerateResourceRequests/resourcememoryname don't set to limits and requests",
            "Test_checkType/the same type",
            "Test_checkType/the different type",
        ),
    ),
    "test_metax": (
        "pkg/device/metax/device_test.go",
        (
            "TestGetNodeDevices/Test with valid node",
            "Test_checkType/node type the same as device",
            "Test_checkType/node type the different from device",
            "Test_GenerateResourceRequests/resource set to limit and request",
            "Test_GenerateResourceRequests/resource don't set to limit and request",
            "Test_CustomFilterRule/allocated id is same as device id",
            "Test_CustomFilterRule/allocated id is different from device id",
            "Test_ScoreNode/policy is binpack",
            "Test_ScoreNode/policy is spread",
            "TestMetaxDevices_AddResourceUsage/test add resource usage",
        ),
    ),
    "test_metax_sgpu": (
        "pkg/device/metax/sdevice_test.go",
        (
            "TestGetMetaxSDevices/test normal node",
            "TestGetMetaxSDevices/test annotations nil",
            "TestGetMetaxSDevices/test Unmarshal fail",
            "TestGetMetaxSDevices/test devices len 0",
            "TestConvertMetaxSDeviceToHAMIDevice/base test",
            "TestCheckDeviceQos/check no use device",
            "TestCheckDeviceQos/check request exclusive",
            "TestCheckDeviceQos/check fail",
            "TestCheckDeviceQos/check pass",
            "TestMetaxSDevices_Fit/fit success",
            "TestMetaxSDevices_Fit/fit fail: memory not enough",
            "TestMetaxSDevices_Fit/fit fail: core not enough",
            "TestMetaxSDevices_Fit/fit fail: type mismatch",
            "TestMetaxSDevices_Fit/fit fail: online task, app class unfit",
            "TestMetaxSDevices_Fit/fit fail: normal task, app class unfit",
            "TestMetaxSDevices_Fit/fit fail: device unhealthy",
            "TestMetaxSDevices_Fit/fit fail: card overused",
            "TestMetaxSDevices_Fit/fit success: but core limit can't exceed 100",
            "TestMetaxSDevices_Fit/fit fail:  card exclusively",
            "TestMetaxSDevices_Fit/fit fail: user assign use uuid mismatch",
            "TestMetaxSDevices_Fit/fit fail: user assign no use uuid match",
            "TestMetaxSDevices_Fit/fit fail:  CardComputeUnitsExhausted",
            "TestMetaxSDevices_Fit/fit fail:  AllocatedCardsInsufficientRequest",
            "TestMetaxSDevices_AddResourceUsage/test add resource usage",
            "TestPrioritizeExclusiveDevices/require one device",
            "TestPrioritizeExclusiveDevices/require two device",
            "TestPrioritizeExclusiveDevices/require four device, best result",
            "TestPrioritizeExclusiveDevices/require four device, general result",
            "TestPrioritizeExclusiveDevices/no metalink, require two device",
            "TestPrioritizeExclusiveDevices/part metalink, require two device, best result",
            "TestPrioritizeExclusiveDevices/part metalink, require four device, bad result",
            "TestNeedScore/enable, allocate 100core",
            "TestNeedScore/disable, allocate 100core",
            "TestNeedScore/enable, allocate 99core",
            "TestNeedScore/enable, container[0]: 99core, container[1]: 100core",
            "TestScoreExclusiveDevices/allocate one device, rest zero device",
            "TestScoreExclusiveDevices/allocate one device, rest three device",
            "TestScoreExclusiveDevices/allocate two device, best result",
            "TestScoreExclusiveDevices/allocate two device, bad result",
            "TestScoreExclusiveDevices/allocate four device, best result",
            "TestScoreExclusiveDevices/allocate four device, bad result",
            "TestScoreExclusiveDevices/allocate eight device",
            "TestCheckAppClass/idle device fit",
            "TestCheckAppClass/normal task unfit online device",
            "TestCheckAppClass/normal task unfit offline device",
            "TestCheckAppClass/normal task fit normal device",
            "TestCheckAppClass/online task unfit normal device",
            "TestCheckAppClass/online task fit online/offline device",
            "TestCheckAppClass/offline task unfit online device",
            "TestPrioritizeOnlineDevices/prioritize idle device",
            "TestPrioritizeOnlineDevices/prioritize onlyOnline device",
            "TestPrioritizeOnlineDevices/prioritize online&offline device",
            "TestPrioritizeOnlineDevices/prioritize onlyOffline device",
            "TestScoreOnlineDevices/test idle device",
            "TestScoreOnlineDevices/test only online device",
            "TestScoreOnlineDevices/test only offline device",
            "TestScoreOnlineDevices/test online/offline device",
        ),
    ),
    "test_devices": (
        "pkg/device/devices_test.go",
        (
            "TestUnMarshalNodeDevices/test one",
            "TestUnMarshalNodeDevices/test two",
        ),
    ),
    "test_common": (
        "pkg/device/common/common_test.go",
        ("TestParseReason/base test",),
    ),
    "test_hygon": (
        "pkg/device/hygon/device_test.go",
        (
            "Test_checkDCUtype/exist one dcu in use type",
            "Test_checkDCUtype/the different of dcu in use type",
            "Test_checkDCUtype/no dcu in use annotation",
            "Test_checkDCUtype/exist multi dcu in use type",
            "Test_checkDCUtype/exist one dcu no use type",
            "Test_checkDCUtype/no dcu in use annotation#01",
            "Test_checkDCUtype/exist multi dcu no use type",
            "Test_checkType/the same type",
            "Test_checkType/the different type",
            "Test_GetNodeDevices/no annotation",
            "Test_GetNodeDevices/exist dcu device",
            "Test_GetNodeDevices/no dcu device",
            "Test_GetNodeDevices/node annotations not decode successfully",
            "Test_GetNodeDevices/dcu device length less than 7",
            "Test_GenerateResourceRequests/don't set to limits and request",
            "Test_GenerateResourceRequests/dcuResourceCount,dcuesourceMem and dcuResourceCores set to limits and request",
            "Test_GenerateResourceRequests/dcuResourceMem,dcuResourceCores don't set limit and dcuResourceCount set to limits and request",
            "TestDevices_AddResourceUsage/test add resource usage",
        ),
    ),
    "test_mthreads": (
        "pkg/device/mthreads/device_test.go",
        (
            "Test_GetNodeDevices/get node device",
            "Test_checkType/the same type",
            "Test_checkType/the different type",
            "Test_GenerateResourceRequests/all resources set to limit and request",
            "Test_GenerateResourceRequests/all resources don't set to limit,count don't set to request",
            "Test_CustomFilterRule/allocate device",
            "Test_CustomFilterRule/don't allocate device",
            "TestDevices_AddResourceUsage/test add resource usage",
        ),
    ),
    "test_nvidia": (
        "pkg/device/nvidia/device_test.go",
        (
            "Test_GetNodeDevices/no gpu devices",
            "Test_GetNodeDevices/no annotation",
            "TestDevices_Fit/fit success",
            "TestDevices_Fit/fit fail: memory not enough",
            "TestDevices_Fit/fit fail: core not enough",
            "TestDevices_Fit/fit fail: type mismatch",
            "TestDevices_Fit/fit fail: user assign use uuid mismatch",
            "TestDevices_Fit/fit fail: user assign no use uuid match",
            "TestDevices_Fit/fit fail: card overused",
            "TestDevices_Fit/fit success: but core limit can't exceed 100",
            "TestDevices_Fit/fit fail:  card exclusively",
            "TestDevices_Fit/fit fail:  CardComputeUnitsExhausted",
            "TestDevices_Fit/fit fail:  AllocatedCardsInsufficientRequest",
            "TestDevices_Fit/fit success:  memory percentage",
            "TestDevices_Fit/fit fail:  CardNotHealth",
        ),
    ),
    "test_iluvatar": (
        "pkg/device/iluvatar/device_test.go",
        (
            "TestGetNodeDevices/no device",
            "TestGetNodeDevices/failed to unmarshal node devices",
            "Test_GenerateResourceRequests/all resources set to limits and requests",
            "Test_GenerateResourceRequests/all resources don't set to limits and requests",
            "Test_checkType/the same type",
            "Test_checkType/the different type",
        ),
    ),
    "test_ascend": (
        "pkg/device/ascend/device_test.go",
        (
            "Test_GetNodeDevices/no device",
            "Test_GetNodeDevices/no annotation",
            "Test_GenerateResourceRequests/don't set to limits and request",
            "Test_GenerateResourceRequests/resourcename and resourcememoryname set to limits and request",
            "Test_GenerateResourceRequests/resourcememoryname don't set to limits and requests",
            "Test_checkType/the same type",
            "Test_checkType/the different type",
        ),
    ),
}


@pytest.mark.parametrize(("test", "kwargs"), replay_cases(UNCHANGED))
def test_unchanged_case(test, kwargs):
    replay("2.8", test, kwargs)
