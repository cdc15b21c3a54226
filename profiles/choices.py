"""Choices of the profiles app (NetBox style: one place for every enumerated value)."""

from __future__ import annotations

from django.db import models

__all__ = ["InventorySource", "Vendor", "DriftKind", "Severity"]


class InventorySource(models.TextChoices):
    """Where a template node's devices come from (design.md section 4)."""

    ANNOTATION_FIRST = "annotation-first", "annotation first, else profile"
    PROFILE_ONLY = "profile-only", "profile only"
    ANNOTATION_ONLY = "annotation-only", "annotation only"


class Vendor(models.TextChoices):
    """Device vendors a profile can describe: the engine vendor's ``common_word`` (HAMi CommonWord).

    One entry per backend of ``hami_sim.engine.vendors.default_vendors()`` (Ascend and Iluvatar per
    chip); ``tests/profiles/test_vendor_profiles.py`` checks the two lists stay equal.
    """

    NVIDIA = "NVIDIA", "NVIDIA GPU"
    MLU = "MLU", "Cambricon MLU (capacity)"
    DCU = "DCU", "Hygon DCU"
    MR_V100 = "MR-V100", "Iluvatar MR-V100"
    MR_V50 = "MR-V50", "Iluvatar MR-V50"
    BI_V150 = "BI-V150", "Iluvatar BI-V150"
    BI_V100 = "BI-V100", "Iluvatar BI-V100"
    MTHREADS = "Mthreads", "Moore Threads (capacity)"
    METAX_GPU = "Metax-GPU", "MetaX GPU (capacity)"
    METAX_SGPU = "Metax-SGPU", "MetaX sGPU"
    GCU = "GCU", "Enflame GCU (capacity)"
    ENFLAME = "Enflame", "Enflame DRS vGCU"
    KUNLUN = "kunlun", "Kunlunxin XPU (capacity)"
    XPU = "XPU", "Kunlunxin vXPU"
    AWS_NEURON = "AWSNeuron", "AWS Neuron (capacity)"
    AMD = "AMD", "AMD GPU"
    ASCEND_910A = "Ascend910A", "Ascend 910A"
    ASCEND_910B2 = "Ascend910B2", "Ascend 910B2"
    ASCEND_910B3 = "Ascend910B3", "Ascend 910B3"
    ASCEND_910B4_1 = "Ascend910B4-1", "Ascend 910B4-1"
    ASCEND_910B4 = "Ascend910B4", "Ascend 910B4"
    ASCEND_910C = "Ascend910C", "Ascend 910C"
    ASCEND_310P = "Ascend310P", "Ascend 310P"
    VASTAI = "Vastai", "Vastai"
    BIREN = "Biren", "Biren"


class DriftKind(models.TextChoices):
    """The drift taxonomy: static differences, dynamic health, and registration problems."""

    MISMATCH = "mismatch", "mismatch"
    DEGRADATION = "degradation", "degradation"
    UNREGISTERED = "unregistered", "unregistered"
    MALFORMED = "malformed", "malformed"


class Severity(models.TextChoices):
    WARNING = "warning", "warning"
    CRITICAL = "critical", "critical"
