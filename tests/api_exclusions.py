"""The exclusion table of tests/test_api_coverage.py: what lucid deliberately is not (yet).

Each entry is a public name of a torch namespace that lucid lacks, grouped under its reason.
A name that lucid gains must be removed here; the coverage test fails on stale entries.
"""

from __future__ import annotations

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
    ("torch.special", "lucid.special"),
    ("torch.distributions", "lucid.distributions"),
    ("torch.distributions.constraints", "lucid.distributions.constraints"),
    ("torch.distributions.transforms", "lucid.distributions.transforms"),
    ("torch.profiler", "lucid.profiler"),
    ("torch.utils.checkpoint", "lucid.utils.checkpoint"),
    ("torch.optim.swa_utils", "lucid.optim.swa_utils"),
    ("torch.utils.data", "lucid.utils.data"),
    ("torch.autograd", "lucid.autograd"),
    ("torch._dynamo", "lucid._dynamo"),
    ("torch._inductor", "lucid._inductor"),
    ("torch.func", "lucid.func"),
    ("torch.testing", "lucid.testing"),
    ("torch.random", "lucid.random"),
    ("torch.nn.attention", "lucid.nn.attention"),
    ("torch.multiprocessing", "lucid.multiprocessing"),
    ("torch.utils.benchmark", "lucid.utils.benchmark"),
]

# ------------------------------------------------------------------------------------------ reasons
ACCELERATOR = "CUDA, ROCm, MPS, XPU, IPU, XLA, MTIA or Vulkan only; lucid computes on the CPU"
BACKEND = (
    "a backend kernel or dispatcher entry point (cudnn_*, miopen_*, mkldnn_*, fbgemm_*, "
    "native_*, ...), not a user API"
)
SPARSE = "sparse tensors and layouts; lucid tensors are dense"
QUANTIZED = "quantized tensors, dtypes and observers"
COMPLEX = "complex dtypes; lucid has none"
JIT = "TorchScript, torch.compile, torch.export, fx, first-class dims or symbolic-shape machinery"
FUNCTIONALIZATION = (
    "a *_copy twin of a view, for torch.compile's functionalization; lucid has the view"
)
STORAGE = (
    "storage objects and shared memory (storage(), untyped_storage(), the *Storage classes, "
    "share_memory_); a lucid tensor owns a NumPy array"
)
STRIDES = (
    "explicit strides (as_strided, set_, new_empty_strided, dim_order); a lucid tensor is a "
    "NumPy array whose strides NumPy owns"
)
NARROW_DTYPE = "a dtype NumPy cannot hold (float8, float4, sub-byte integers, bit types)"
DEPRECATED = "deprecated in torch, with its replacement in lucid"
REMOVED = "removed from torch: calling it raises there, naming its replacement, which lucid has"
UNSAFE = (
    "an unsafe_* twin that skips autograd's checks on in-place writes to its outputs (views); "
    "lucid has the checked op"
)
ENGINE = "not yet in lucid: it needs the autograd engine (lucid/_core) to act on it"
NESTED = "nested and subclass tensor machinery (torch_function overrides, nested tensors)"
DATAPIPES = "DataPipes, deprecated in torch.utils.data"
SIGNAL = "spectral transforms (stft, istft), which produce complex tensors"
ATEN = (
    "the ATen form of an nn.functional op (positional flags, integer reduction codes, cudnn "
    "switches); lucid has the op in lucid.nn.functional"
)
LIMITED_DTYPE = "a dtype torch itself supports in few ops (uint16, uint32, uint64)"
OUT = "an out= result tensor; lucid ops return new tensors"
PICKLE = "a pickle option; lucid's checkpoints never use pickle"
INTERNAL = (
    "a torch internal with a public name (a typing alias, a benchmark or logging helper, a "
    "C++ binding)"
)
CALLGRIND = (
    "Callgrind instruction counts (Timer.collect_callgrind), which run torch's C++ under "
    "valgrind; lucid has no compiled code to count"
)
FUZZER = "planned: the benchmark input fuzzers (Fuzzer and its parameter and tensor specs)"
REASONS = [
    ACCELERATOR,
    BACKEND,
    SPARSE,
    QUANTIZED,
    COMPLEX,
    JIT,
    FUNCTIONALIZATION,
    STORAGE,
    STRIDES,
    NARROW_DTYPE,
    DEPRECATED,
    REMOVED,
    UNSAFE,
    ENGINE,
    NESTED,
    DATAPIPES,
    SIGNAL,
    ATEN,
    LIMITED_DTYPE,
    OUT,
    PICKLE,
    INTERNAL,
    CALLGRIND,
    FUZZER,
]


def _names(reason: str, names: str) -> dict[str, str]:
    return dict.fromkeys(names.split(), reason)


EXCLUDED: dict[str, dict[str, str]] = {
    "torch": {
        **_names(
            ACCELERATOR,
            """
            AcceleratorError Event OutOfMemoryError Stream get_device_module is_vulkan_available
            """,
        ),
        **_names(
            BACKEND,
            """
            affine_grid_generator batch_norm_backward_elemt batch_norm_backward_reduce
            batch_norm_elemt batch_norm_gather_stats batch_norm_gather_stats_with_counts
            batch_norm_stats batch_norm_update_stats constant_pad_nd conv_tbc convolution
            cudnn_affine_grid_generator cudnn_batch_norm cudnn_convolution
            cudnn_convolution_add_relu cudnn_convolution_relu cudnn_convolution_transpose
            cudnn_grid_sampler cudnn_is_acceptable embedding_renorm_ fbgemm_linear_fp16_weight
            fbgemm_linear_fp16_weight_fp32_activation fbgemm_linear_int8_weight
            fbgemm_linear_int8_weight_fp32_activation fbgemm_linear_quantize_weight
            fbgemm_pack_gemm_matrix_fp16 fbgemm_pack_quantized_matrix feature_dropout
            feature_dropout_ frobenius_norm grid_sampler grid_sampler_2d grid_sampler_3d gru
            gru_cell lstm lstm_cell miopen_batch_norm miopen_convolution
            miopen_convolution_add_relu miopen_convolution_relu miopen_convolution_transpose
            miopen_ctc_loss miopen_depthwise_convolution miopen_rnn mkldnn_adaptive_avg_pool2d
            mkldnn_convolution mkldnn_linear_backward_weights mkldnn_max_pool2d
            mkldnn_max_pool3d mkldnn_rnn_layer native_batch_norm native_channel_shuffle
            native_dropout native_group_norm native_layer_norm native_norm nonzero_static
            norm_except_dim nuclear_norm rnn_relu rnn_relu_cell rnn_tanh rnn_tanh_cell
            slice_inverse split_with_sizes split_with_sizes_copy unsafe_chunk unsafe_split
            unsafe_split_with_sizes
            """,
        ),
        **_names(
            SPARSE,
            """
            ccol_indices_copy col_indices_copy crow_indices_copy dsmm hsmm hspmm indices_copy
            resize_as_sparse_ row_indices_copy saddmm smm sparse_bsc_tensor sparse_bsr_tensor
            sparse_compressed_tensor sparse_coo_tensor sparse_csc_tensor sparse_csr_tensor spmm
            sspaddmm values_copy
            """,
        ),
        **_names(
            QUANTIZED,
            """
            choose_qparams_optimized dequantize empty_quantized fake_quantize_per_channel_affine
            fake_quantize_per_tensor_affine fused_moving_avg_obs_fake_quant int_repr
            q_per_channel_axis q_per_channel_scales q_per_channel_zero_points q_scale
            q_zero_point qint32 qint8 qscheme quantize_per_channel quantize_per_tensor
            quantize_per_tensor_dynamic quantized_batch_norm quantized_gru_cell
            quantized_lstm_cell quantized_max_pool1d quantized_max_pool2d quantized_max_pool3d
            quantized_rnn_relu_cell quantized_rnn_tanh_cell quint2x4 quint4x2 quint8
            """,
        ),
        **_names(
            COMPLEX,
            """
            cdouble cfloat chalf complex complex128 complex32 complex64 polar view_as_complex
            view_as_real
            """,
        ),
        **_names(
            JIT,
            """
            AggregationType AliasDb AnyType Argument ArgumentSpec AwaitType Block BoolType
            BufferDict CallStack Capsule ClassType Code CompilationUnit CompleteArgumentSpec
            ComplexType ConcreteModuleType ConcreteModuleTypeBuilder DeepCopyMemoTable
            DeviceObjType DictType DisableTorchFunction DisableTorchFunctionSubclass DispatchKey
            DispatchKeySet EnumType ErrorReport ExcludeDispatchKeyGuard ExecutionPlan FileCheck
            FloatType FunctionSchema Future FutureType Gradient Graph GraphExecutorState
            IODescriptor InferredType IntType InterfaceType JITException ListType
            LiteScriptModule Node NoneType NumberType OperatorInfo OptionalType PyObjectType
            RRefType ScriptClass ScriptClassFunction ScriptDict ScriptDictIterator
            ScriptDictKeyIterator ScriptFunction ScriptList ScriptListIterator ScriptMethod
            ScriptModule ScriptModuleSerializer ScriptObject ScriptObjectProperty StaticModule
            StreamObjType StringType SymBool SymBoolType SymFloat SymInt SymIntType Tag
            TensorType TracingState TupleType Type UnionType Use Value cond fork
            import_ir_module import_ir_module_from_buffer merge_type_from_type_comment parse_ir
            parse_schema parse_type_comment sym_constrain_range sym_constrain_range_for_size
            sym_float sym_fresh_size sym_int sym_ite sym_max sym_min sym_not sym_sqrt sym_sum
            unify_type_list wait
            """,
        ),
        **_names(
            FUNCTIONALIZATION,
            """
            alias_copy as_strided_copy detach_copy diagonal_copy expand_copy narrow_copy
            permute_copy select_copy slice_copy split_copy squeeze_copy t_copy transpose_copy
            unbind_copy unfold_copy unsqueeze_copy view_as_complex_copy view_as_real_copy
            view_copy
            """,
        ),
        **_names(
            STORAGE,
            """
            BoolStorage ByteStorage CharStorage DoubleStorage FloatStorage IntStorage
            LongStorage ShortStorage TypedStorage UntypedStorage is_storage
            """,
        ),
        **_names(
            STRIDES,
            "as_strided as_strided_ as_strided_scatter empty_permuted empty_strided from_file",
        ),
        **_names(
            NARROW_DTYPE,
            """
            bit bits16 bits1x8 bits2x4 bits4x2 bits8 float4_e2m1fn_x2 float8_e4m3fn
            float8_e4m3fnuz float8_e5m2 float8_e5m2fnuz float8_e8m0fnu int1 int2 int3 int4 int5
            int6 int7 uint1 uint2 uint3 uint4 uint5 uint6 uint7
            """,
        ),
        **_names(DEPRECATED, "lu_solve range triangular_solve"),
        **_names(SIGNAL, "istft stft"),
        **_names(
            ATEN,
            """
            adaptive_max_pool1d alpha_dropout alpha_dropout_ batch_norm
            binary_cross_entropy_with_logits cosine_embedding_loss ctc_loss dropout dropout_
            embedding embedding_bag feature_alpha_dropout feature_alpha_dropout_ group_norm
            hinge_embedding_loss instance_norm kl_div layer_norm margin_ranking_loss max_pool1d
            max_pool1d_with_indices max_pool2d max_pool3d poisson_nll_loss rms_norm rrelu
            threshold triplet_margin_loss
            """,
        ),
        **_names(LIMITED_DTYPE, "uint16 uint32 uint64"),
        **_names(
            INTERNAL,
            """
            AVG BenchmarkConfig BenchmarkExecutionStats DeserializationStorageContext FatalError
            LockingLogger ModuleDict NoopLogger ParameterDict PyTorchFileReader
            PyTorchFileWriter SUM SerializationStorageContext ThroughputBenchmark
            init_num_threads thread_safe_generator
            """,
        ),
    },
    "torch.Tensor": {
        **_names(ACCELERATOR, "ipu mtia record_stream to_mkldnn xpu"),
        **_names(BACKEND, "slice_inverse"),
        **_names(JIT, "nonzero_static"),
        **_names(UNSAFE, "unsafe_chunk unsafe_split unsafe_split_with_sizes"),
        **_names(
            SPARSE,
            """
            ccol_indices coalesce col_indices crow_indices dense_dim indices is_coalesced
            narrow_copy resize_as_sparse_ row_indices smm sparse_dim sparse_mask sparse_resize_
            sparse_resize_and_clear_ sspaddmm to_sparse to_sparse_bsc to_sparse_bsr to_sparse_coo
            to_sparse_csc to_sparse_csr values
            """,
        ),
        **_names(
            QUANTIZED,
            """
            dequantize int_repr q_per_channel_axis q_per_channel_scales q_per_channel_zero_points
            q_scale q_zero_point qscheme
            """,
        ),
        **_names(COMPLEX, "cdouble cfloat chalf"),
        **_names(STORAGE, "is_set_to share_memory_ storage storage_type untyped_storage"),
        **_names(
            STRIDES,
            "as_strided as_strided_ as_strided_scatter dim_order new_empty_strided set_",
        ),
        **_names(DEPRECATED, "lu lu_solve triangular_solve"),
        **_names(REMOVED, "eig lstsq reinforce solve symeig"),
        **_names(NESTED, "as_subclass module_load to_padded_tensor"),
        **_names(SIGNAL, "istft stft"),
        **_names(ENGINE, "grad_dtype"),
        **_names(JIT, "index"),
    },
    "torch.nn": {
        **_names(DEPRECATED, "Container"),
        **_names(INTERNAL, "factory_kwargs"),
    },
    "torch.nn.functional": {
        **_names(ACCELERATOR, "grouped_mm scaled_grouped_mm scaled_mm"),
        **_names(BACKEND, "conv_tbc native_channel_shuffle"),
        **_names(SPARSE, "sparse_support_notes"),
        **_names(JIT, "DType ScalingType SwizzleType"),
        **_names(
            NESTED,
            """
            handle_torch_function has_torch_function has_torch_function_unary
            has_torch_function_variadic
            """,
        ),
        **_names(
            INTERNAL,
            """
            BroadcastingList1 BroadcastingList2 BroadcastingList3 Callable
            GRID_SAMPLE_INTERPOLATION_MODES GRID_SAMPLE_PADDING_MODES Optional TYPE_CHECKING
            assert_int_or_pair boolean_dispatch reproducibility_notes tf32_notes
            """,
        ),
    },
    "torch.optim": {
        **_names(INTERNAL, "swap_in_optimizer_params_and_state"),
    },
    "torch.linalg": {
        **_names(INTERNAL, "common_notes"),
    },
    "torch.utils.data": {
        **_names(
            DATAPIPES,
            """
            DFIterDataPipe DataChunk IterDataPipe MapDataPipe argument_validation
            functional_datapipe guaranteed_datapipes_determinism non_deterministic
            runtime_validation runtime_validation_disabled
            """,
        ),
    },
    "torch.autograd": {
        **_names(JIT, "enforce_grad_layout_policy"),
        **_names(DEPRECATED, "NestedIOFunction variable"),
    },
    # lucid._dynamo has the config and the calls training scripts make around torch.compile
    "torch._dynamo": _names(
        JIT,
        """
        OptimizedModule allow_c_slot assume_constant_result disable_nested_graph_breaks
        disallow_in_graph dont_skip_tracing error_on_graph_break explain export forbid_in_graph
        is_dynamo_disable_recursive lookup_backend nonstrict_trace optimize
        optimize_assert override_cudagraphs override_optimization_hint patch_dynamo_config
        register_backend replay reset_recompile_user_contexts run set_recursion_limit set_stance
        skip_frame step_unsupported substitute_in_graph
        """,
    ),
    "torch._inductor": _names(JIT, "compile standalone_compile"),
    # torch's execution-graph capture (for replay and simulators) records the ATen graph
    "torch.profiler": _names(JIT, "ExecutionTraceObserver"),
    "torch.utils.checkpoint": {
        # selective checkpointing picks what to save per ATen op through torch's dispatcher;
        # lucid's checkpoint recomputes the whole region
        **_names(
            ENGINE,
            """
            CheckpointPolicy SAC_IGNORED_OPS SelectiveCheckpointContext
            create_selective_checkpoint_contexts
            """,
        ),
        **_names(ACCELERATOR, "DefaultDeviceType get_device_states set_device_states"),
        **_names(INTERNAL, "GraphExecGroup"),
    },
    # lucid.func has the transforms; these act on functorch's wrapper tensors and graph tracing
    "torch.func": {
        **_names(JIT, "functionalize rearrange"),
        **_names(NESTED, "debug_unwrap"),
    },
    # FileCheck matches patterns in TorchScript graphs
    "torch.testing": _names(JIT, "FileCheck"),
    # the registry of FlashAttention 3/4 kernels, which are CUDA builds
    "torch.nn.attention": _names(
        ACCELERATOR,
        """
        activate_flash_attention_impl current_flash_attention_impl list_flash_attention_impls
        register_flash_attention_impl restore_flash_attention_impl
        """,
    ),
    "torch.utils.benchmark": {
        **_names(CALLGRIND, "CallgrindStats CopyIfCallgrind FunctionCount FunctionCounts"),
        **_names(FUZZER, "FuzzedParameter FuzzedSparseTensor FuzzedTensor Fuzzer ParameterAlias"),
        **_names(INTERNAL, "Number"),
    },
}

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
    ("torch", "save"): {
        "pickle_module": PICKLE,
        "pickle_protocol": PICKLE,
        "_use_new_zipfile_serialization": PICKLE,
        "_disable_byteorder_record": PICKLE,
    },
}
