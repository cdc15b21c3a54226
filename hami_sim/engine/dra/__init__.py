"""Dynamic Resource Allocation (``resource.k8s.io/v1``): the structured allocator, simulated.

The scheduler's DRA plugin (and CA's simulation of it) allocates a pod's ResourceClaims from the
devices that drivers publish in ResourceSlices. This package answers the same question for one node
and a set of claims, for the claim shapes HAMi's DRA driver and webhook use: ``ExactCount`` and
``All`` requests, CEL selectors, device attributes and capacity, consumable capacity with request
policies and ``allowMultipleAllocations``, and devices already allocated to other claims. Anything
else a claim may say (prioritized lists, constraints, admin access, device taints, partitionable
devices, binding conditions) is refused with a clear error rather than simulated wrongly.

Data flows one way: ``objects`` parses API JSON into frozen values, ``selectors`` evaluates CEL,
``capacity`` applies the consumable-capacity rules, ``allocator`` searches, ``hamidra`` turns pods
and node-group profiles into claims and template slices.
"""
