"""The tables of tests/test_api_coverage.py: the torch namespaces lucid mirrors, name by name,
and the parameters of shared names that lucid does not accept.

Why lucid lacks a public name of one of these namespaces, or a whole torch namespace, is in
lucid/_absent.py: lucid's namespaces read that table to give the reason in their
AttributeError, and the coverage test checks it against torch (a name that lucid gains must
leave it; a stale entry fails).
"""

from __future__ import annotations

from lucid._absent import (
    ACCELERATOR,
    EVENT_FIELD,
    INTERNAL,
    JIT,
    LEGACY_PROFILER,
    OUT,
    PICKLE,
    PROFILER_BACKEND,
)

NAMESPACES = [
    ("torch", "lucid"),
    ("torch.Tensor", "lucid.Tensor"),
    ("torch.nn", "lucid.nn"),
    ("torch.nn.functional", "lucid.nn.functional"),
    ("torch.nn.init", "lucid.nn.init"),
    ("torch.nn.utils", "lucid.nn.utils"),
    ("torch.optim", "lucid.optim"),
    ("torch.optim.lr_scheduler", "lucid.optim.lr_scheduler"),
    ("torch.linalg", "lucid.linalg"),
    ("torch.fft", "lucid.fft"),
    ("torch.special", "lucid.special"),
    ("torch.distributions", "lucid.distributions"),
    ("torch.distributions.constraints", "lucid.distributions.constraints"),
    ("torch.distributions.transforms", "lucid.distributions.transforms"),
    ("torch.profiler", "lucid.profiler"),
    ("torch.utils.checkpoint", "lucid.utils.checkpoint"),
    ("torch.optim.swa_utils", "lucid.optim.swa_utils"),
    ("torch.utils.data", "lucid.utils.data"),
    ("torch.autograd", "lucid.autograd"),
    ("torch.autograd.forward_ad", "lucid.autograd.forward_ad"),
    ("torch.autograd.graph", "lucid.autograd.graph"),
    ("torch._dynamo", "lucid._dynamo"),
    ("torch._inductor", "lucid._inductor"),
    ("torch.func", "lucid.func"),
    ("torch.testing", "lucid.testing"),
    ("torch.random", "lucid.random"),
    ("torch.nn.attention", "lucid.nn.attention"),
    ("torch.multiprocessing", "lucid.multiprocessing"),
    ("torch.utils.benchmark", "lucid.utils.benchmark"),
    ("torch.functional", "lucid"),
    ("torch.amp", "lucid.amp"),
    ("torch.cpu", "lucid.cpu"),
    ("torch.cpu.amp", "lucid.cpu.amp"),
    ("torch.cuda", "lucid.cuda"),
    ("torch.cuda.amp", "lucid.cuda.amp"),
    ("torch.accelerator", "lucid.accelerator"),
    ("torch.backends", "lucid.backends"),
    ("torch.backends.cuda", "lucid.backends.cuda"),
    ("torch.backends.mps", "lucid.backends.mps"),
    ("torch.jit", "lucid.jit"),
    ("torch.distributed", "lucid.distributed"),
    ("torch.autograd.functional", "lucid.autograd.functional"),
    ("torch.autograd.profiler", "lucid.autograd.profiler"),
    ("torch.nn.parallel", "lucid.nn.parallel"),
    ("torch.utils", "lucid.utils"),
    ("torch.utils.hooks", "lucid.utils.hooks"),
    ("torch.utils.tensorboard", "lucid.utils.tensorboard"),
]

# (namespace, name) -> {parameter torch accepts and lucid does not: reason}
EXCLUDED_PARAMETERS: dict[tuple[str, str], dict[str, str]] = {
    ("torch", "compile"): {
        "name": JIT,
        "recompile_limit": JIT,
        "isolate_recompiles": JIT,
        "shapes_spec": JIT,
    },
    ("torch", "load"): {"pickle_module": PICKLE, "mmap": PICKLE},
    ("torch", "norm"): {"out": OUT},
    ("torch.functional", "norm"): {"out": OUT},
    ("torch", "save"): {
        "pickle_module": PICKLE,
        "pickle_protocol": PICKLE,
        "_use_new_zipfile_serialization": PICKLE,
        "_disable_byteorder_record": PICKLE,
    },
    ("torch.autograd.profiler", "profile"): {
        **dict.fromkeys(["use_device", "use_cpu"], ACCELERATOR),
        **dict.fromkeys(["with_flops", "with_modules"], LEGACY_PROFILER),
        **dict.fromkeys(
            """
            use_kineto experimental_config acc_events custom_trace_id_callback
            post_processing_timeout_s activity_filters
            """.split(),
            PROFILER_BACKEND,
        ),
    },
    ("torch.autograd.profiler", "FunctionEvent"): dict.fromkeys(
        """
        activity_type concrete_inputs device_index device_memory_usage device_resource_id
        device_type external_id extra_meta flops flow_id flow_start flow_type fwd_thread
        input_dtypes is_async is_legacy is_python_function is_remote kwinputs
        linked_correlation_id metadata_json node_id overload_name python_id python_module_id
        python_parent_id structured_input_shapes structured_input_strides trace_name
        """.split(),
        EVENT_FIELD,
    ),
    # the further hook tables (kwargs hooks, always-call hooks) torch's Module hands it
    ("torch.utils.hooks", "RemovableHandle"): {"extra_dict": INTERNAL},
}
