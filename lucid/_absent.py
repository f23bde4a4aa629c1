"""Why lucid lacks a name torch has: one reason for each public name of a torch namespace that
lucid's counterpart does not have, and for each torch namespace lucid has no counterpart of.

A namespace's `__getattr__` imports this table only when a lookup fails, so that torch's
message ("module 'lucid' has no attribute 'onnx'") goes on with the reason; `import lucid`
never loads it. tests/test_api_coverage.py checks the table against torch, name by name.
"""

from __future__ import annotations

# ------------------------------------------------------------------------------------------ reasons
ACCELERATOR = "CUDA, ROCm, MPS, XPU, IPU, XLA, MTIA or Vulkan only; lucid computes on the CPU"
BACKEND = (
    "a backend kernel or dispatcher entry point (cudnn_*, miopen_*, mkldnn_*, fbgemm_*, "
    "native_*, ...), not a user API"
)
SPARSE = "sparse tensors and layouts; lucid tensors are dense"
QUANTIZED = "quantized tensors, dtypes and observers"
COMPLEX_HALF = (
    "complex32 (chalf), the half-precision complex dtype PyTorch's CPU build runs in few ops; "
    "lucid has complex64 and complex128"
)
COMPLEX_COLLECTIVES = "complex tensors in collectives; lucid.distributed reduces real tensors only"
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
LOWRANK = "planned: the randomized low-rank factorizations (svd_lowrank, pca_lowrank)"
EVENT_FIELD = (
    "a field of torch's profiler event records that its C++ profiler (Kineto) fills: devices, "
    "flows, Python ids, FLOPs, ...; lucid's events hold what its Python profiler records"
)
LEGACY_PROFILER = (
    "planned: lucid.profiler.profile takes it; the legacy lucid.autograd.profiler.profile does "
    "not yet"
)
CPU_DEVICE = (
    "planned: the device-module interface torch gives the CPU as it does each accelerator "
    "(is_available, device_count, synchronize, streams and events)"
)
C10D = (
    "torch's c10d machinery: its stores, rendezvous, debug levels and the backends other than "
    "MPI (gloo, NCCL, UCC, XCCL); lucid's process groups run on MPI"
)
COLLECTIVES = (
    "planned: collectives and group queries that lucid's MPI process groups do not have yet"
)
PARALLELISM = (
    "sharded and model parallelism (FSDP, ZeRO, DTensor, device meshes, tensor and pipeline "
    "parallelism); lucid's distributed training is data parallel (DistributedDataParallel)"
)
RPC = (
    "remote procedure calls between workers (torch.distributed.rpc, and distributed autograd "
    "and RemoteModule on it); lucid's ranks communicate by collectives"
)
ELASTIC = (
    "torchrun's elastic, fault-tolerant launching (rendezvous, restarts, NUMA binding); "
    "lucid.distributed.run starts a fixed set of ranks on MPI"
)
DISTRIBUTED_CHECKPOINT = (
    "sharded checkpoints written by every rank (torch.distributed.checkpoint); lucid saves a "
    "state dict from one rank with lucid.save"
)
DISTRIBUTED_AUTOGRAD = (
    "collectives that autograd differentiates through; lucid's collectives, as "
    "torch.distributed's, are not recorded by autograd"
)
DDP_ADDONS = (
    "planned: DistributedDataParallel's add-ons (Join for uneven inputs, communication hooks, "
    "model averaging)"
)
FUTURES = (
    "torch.futures' Future, the asynchronous result of TorchScript's fork, RPC calls and DDP "
    "communication hooks, none of which lucid has"
)
PROFILER_BACKEND = (
    "a bridge to an external profiler's C++ API (Kineto, Intel VTune's ITT); lucid's profiler "
    "records in Python"
)
BACKEND_LIBRARY = (
    "a switch or query of one of torch's compute libraries (oneDNN, MKL, NNPACK, OpenMP, "
    "opt_einsum, XNNPACK, KleidiAI, the fused MultiheadAttention path, ...); lucid computes "
    "with NumPy"
)
SWAP = (
    "swapping two tensors' contents and Python state in place (torch.utils.swap_tensors, and "
    "the torch.__future__ switches for Module.to() that use it); lucid's modules keep each "
    "parameter and change its data, as torch does by default"
)
ONNX = "ONNX export, which traces the model with torch.export; lucid exports no graphs"
HUB = (
    "downloads models and code from the internet (GitHub repositories, model URLs); lucid "
    "loads weights from local files only (lucid.load, lucid.utils.from_torch_state_dict)"
)
DISPATCHER = (
    "registering custom ops and kernels with torch's dispatcher; a lucid op is a "
    "lucid.autograd.Function subclass"
)
MASKED = "masked tensors (torch.masked's MaskedTensor and its reductions), a tensor subclass"
MONITOR = "torch.monitor's events and counters, which report through torch's C++ handlers"
PACKAGE = (
    "archives of code and pickled objects (torch.package); lucid's checkpoints never use pickle"
)
SERIALIZATION = (
    "torch's pickle-based checkpoint machinery (safe globals, endianness, mmap, storage "
    "locations); lucid.save and lucid.load are at lucid's top level and never use pickle"
)
CPP_EXTENSION = (
    "building C++ and CUDA extensions against torch's ATen; lucid has no compiled code to extend"
)
VERSION = (
    "torch's build information (its version string class, CUDA, ROCm and git revision, "
    "compile configuration); lucid is Python on NumPy and its version is lucid.__version__"
)
RETURN_TYPES = (
    "torch's result types of ops that return several tensors; lucid's ops return named tuples "
    "of their own with the same fields (lucid.max(x, 0).values)"
)
DLPACK = "DLPack exchange, which lucid has at its top level (lucid.from_dlpack, Tensor.__dlpack__)"
EMPTY = "a torch module with no public names (what it holds is private)"
SOBOL = "planned: quasi-random sequences (torch.quasirandom.SobolEngine)"
WINDOWS = (
    "planned: torch.signal.windows' window functions; lucid has torch's top-level ones "
    "(hann_window, hamming_window, blackman_window, bartlett_window, kaiser_window)"
)
PRUNE = "planned: pruning (torch.nn.utils.prune's masks, applied by forward pre-hooks)"
MODULE_TRACKER = (
    "planned: ModuleTracker, which follows the module hierarchy through global module hooks"
)
UNINITIALIZED = (
    "planned: torch.utils.deterministic.fill_uninitialized_memory (under deterministic "
    "algorithms torch fills empty() tensors with NaN); lucid's empty() leaves NumPy's memory "
    "as it is"
)
REASONS = [
    ACCELERATOR,
    BACKEND,
    SPARSE,
    QUANTIZED,
    COMPLEX_HALF,
    COMPLEX_COLLECTIVES,
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
    ATEN,
    LIMITED_DTYPE,
    OUT,
    PICKLE,
    INTERNAL,
    CALLGRIND,
    FUZZER,
    LOWRANK,
    EVENT_FIELD,
    LEGACY_PROFILER,
    CPU_DEVICE,
    C10D,
    COLLECTIVES,
    PARALLELISM,
    RPC,
    ELASTIC,
    DISTRIBUTED_CHECKPOINT,
    DISTRIBUTED_AUTOGRAD,
    DDP_ADDONS,
    FUTURES,
    PROFILER_BACKEND,
    BACKEND_LIBRARY,
    SWAP,
    ONNX,
    HUB,
    DISPATCHER,
    MASKED,
    MONITOR,
    PACKAGE,
    SERIALIZATION,
    CPP_EXTENSION,
    VERSION,
    RETURN_TYPES,
    DLPACK,
    EMPTY,
    SOBOL,
    WINDOWS,
    PRUNE,
    MODULE_TRACKER,
    UNINITIALIZED,
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
            COMPLEX_HALF,
            "chalf complex32",
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
        **_names(COMPLEX_HALF, "chalf"),
        **_names(STORAGE, "is_set_to share_memory_ storage storage_type untyped_storage"),
        **_names(
            STRIDES,
            "as_strided as_strided_ as_strided_scatter dim_order new_empty_strided set_",
        ),
        **_names(DEPRECATED, "lu lu_solve triangular_solve"),
        **_names(REMOVED, "eig lstsq reinforce solve symeig"),
        **_names(NESTED, "as_subclass module_load to_padded_tensor"),
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
    # torch.functional holds torch's own top-level functions, which lucid has at its top level
    "torch.functional": {
        **_names(DEPRECATED, "lu"),
        **_names(LOWRANK, "pca_lowrank svd_lowrank"),
    },
    "torch.cpu": _names(
        CPU_DEVICE,
        """
        Event Stream StreamContext current_device current_stream device_count get_capabilities
        is_available is_initialized set_device stream synchronize
        """,
    ),
    # lucid.cuda answers as torch's build without CUDA does; the rest acts on a GPU
    "torch.cuda": _names(
        ACCELERATOR,
        """
        BFloat16Storage BFloat16Tensor BoolStorage BoolTensor ByteStorage ByteTensor CUDAGraph
        CUDAPluggableAllocator CharStorage CharTensor ComplexDoubleStorage ComplexFloatStorage
        CudaError DeferredCudaCallError DoubleStorage DoubleTensor Event ExternalStream
        FloatStorage FloatTensor GreenContext HalfStorage HalfTensor IntStorage IntTensor
        LongStorage LongTensor MemPool ShortStorage ShortTensor Stream StreamContext
        caching_allocator_alloc caching_allocator_delete caching_allocator_disabled
        caching_allocator_enable can_device_access_peer change_current_allocator check_error
        clock_rate cudaStatus cudart current_blas_handle current_solver_handle current_stream
        default_generators default_stream device device_memory_used device_of
        get_allocator_backend get_arch_list get_device_capability get_device_properties
        get_gencode_flags get_per_process_memory_fraction get_rng_state get_rng_state_all
        get_stream_from_external get_sync_debug_mode graph graph_pool_handle has_half has_magma
        host_memory_stats host_memory_stats_as_nested_dict init initial_seed ipc_collect
        is_current_stream_capturing is_tf32_supported list_gpu_processes make_graphed_callables
        max_memory_allocated max_memory_cached max_memory_reserved mem_get_info memory_cached
        memory_reserved memory_snapshot memory_stats memory_stats_as_nested_dict memory_summary
        memory_usage power_draw reset_accumulated_host_memory_stats
        reset_accumulated_memory_stats reset_max_memory_allocated reset_max_memory_cached
        reset_peak_host_memory_stats reset_peak_memory_stats seed seed_all set_device
        set_per_process_memory_fraction set_rng_state set_rng_state_all set_stream
        set_sync_debug_mode stream temperature use_mem_pool utilization
        """,
    ),
    "torch.cuda.amp": _names(ACCELERATOR, "amp_definitely_not_available"),
    "torch.backends.cuda": _names(
        ACCELERATOR,
        """
        SDPAParams allow_fp16_bf16_reduction_math_sdp blas_workspace_size
        can_use_cudnn_attention can_use_efficient_attention can_use_flash_attention cuBLASModule
        cuFFTPlanCache cuFFTPlanCacheAttrContextProp cuFFTPlanCacheManager
        cublas_workspace_size cublaslt_workspace_size cudnn_sdp_enabled cufft_plan_cache
        enable_cudnn_sdp enable_flash_sdp enable_math_sdp enable_mem_efficient_sdp
        flash_sdp_enabled fp16_bf16_reduction_math_sdp_allowed is_ck_sdpa_available
        is_flash_attention_available math_sdp_enabled mem_efficient_sdp_enabled
        preferred_blas_library preferred_linalg_library preferred_rocm_fa_library sdp_kernel
        """,
    ),
    "torch.backends.mps": _names(
        ACCELERATOR, "get_core_count get_name is_macos13_or_newer is_macos_or_newer"
    ),
    # lucid.accelerator answers as torch's CPU build does: there is none to act on
    "torch.accelerator": _names(
        ACCELERATOR,
        """
        Graph current_device_idx current_device_index current_stream device_index empty_cache
        empty_host_cache get_device_capability get_memory_info max_memory_allocated
        max_memory_reserved memory_allocated memory_reserved memory_stats
        reset_accumulated_memory_stats reset_peak_memory_stats set_device_idx set_device_index
        set_stream synchronize
        """,
    ),
    # lucid.jit has script and trace, which say that lucid has no TorchScript
    "torch.jit": _names(
        JIT,
        """
        Attribute CompilationUnit Error Future ScriptFunction ScriptModule annotate
        enable_onednn_fusion export export_opnames fork freeze ignore interface isinstance load
        onednn_fusion_enabled optimize_for_inference save script_if_tracing
        set_fusion_strategy strict_fusion trace_module unused wait
        """,
    ),
    "torch.distributed": {
        **_names(
            C10D,
            """
            BackendConfig DebugLevel DistNetworkError DistStoreError FileStore HashStore
            PrefixStore ProcessGroupGloo QueueEmptyError Store TCPStore get_backend_config
            get_debug_level get_default_backend_for_device is_backend_available
            is_gloo_available is_nccl_available is_ucc_available is_xccl_available record_comm
            register_rendezvous_handler rendezvous set_debug_level set_debug_level_from_env
            """,
        ),
        **_names(
            COLLECTIVES,
            """
            P2POp all_gather_single all_to_all all_to_all_single batch_isend_irecv breakpoint
            gather_object get_global_rank get_group_rank get_node_local_rank get_pg_count
            get_process_group_ranks group monitored_barrier new_subgroups
            new_subgroups_by_enumeration recv_object_list reduce_scatter reduce_scatter_single
            scatter_object_list send_object_list
            """,
        ),
        # only the NCCL backend splits and shrinks groups
        **_names(ACCELERATOR, "shrink_group split_group"),
        **_names(PARALLELISM, "DeviceMesh init_device_mesh"),
        **_names(FUTURES, "BuiltinCommHookType GradBucket"),
        **_names(ELASTIC, "is_torchelastic_launched"),
        **_names(DEPRECATED, "all_gather_coalesced all_reduce_coalesced reduce_op"),
        **_names(COMPLEX_COLLECTIVES, "supports_complex"),
        **_names(
            INTERNAL,
            """
            AllToAllOptions AllreduceCoalescedOptions AllreduceOptions BarrierOptions
            BroadcastOptions GatherOptions GroupName Logger RankType ReduceOptions
            ReduceScatterOptions Reducer ScatterOptions log timedelta
            """,
        ),
    },
    "torch.autograd.graph": {
        **_names(ACCELERATOR, "set_override_stale_capture_stream"),
        **_names(ACCELERATOR, "set_warn_on_accumulate_grad_stream_mismatch"),
        # torch.compile's activation-memory budget for the partitioner's recomputation
        **_names(JIT, "region_activation_memory_budget"),
        **_names(ENGINE, "allow_mutation_on_saved_tensors register_multi_grad_hook"),
    },
    "torch.autograd.profiler": {
        **_names(PROFILER_BACKEND, "KinetoStepTracker emit_itt"),
        **_names(INTERNAL, "EnforceUnique MemRecordsAcc parse_nvprof_trace"),
    },
    # DataParallel's primitives, which spread a module and its batch over several GPUs
    "torch.nn.parallel": _names(ACCELERATOR, "gather parallel_apply replicate scatter"),
    "torch.utils": {
        **_names(BACKEND, "generate_methods_for_privateuse1_backend rename_privateuse1_backend"),
        **_names(CPP_EXTENSION, "cmake_prefix_path"),
        **_names(SWAP, "swap_tensors"),
        **_names(INTERNAL, "ThroughputBenchmark get_cpp_backtrace set_module"),
    },
    # tensorboard's own record writer, which torch re-exports; lucid writes its events itself
    "torch.utils.tensorboard": _names(INTERNAL, "RecordWriter"),
    "torch.utils.hooks": {
        **_names(INTERNAL, "BackwardHook"),
        **_names(PICKLE, "unserializable_hook warn_if_has_hooks"),
    },
}

# The torch namespaces lucid has no counterpart of: torch's path -> reason. A namespace under
# one of them is listed when torch documents it; lucid's lookup stops at the first.
ABSENT: dict[str, str] = {
    "torch.__config__": VERSION,
    "torch.__future__": SWAP,
    "torch._logging": JIT,
    "torch.accelerator.memory": ACCELERATOR,
    "torch.ao": QUANTIZED,
    "torch.ao.quantization": QUANTIZED,
    "torch.backends.cpu": BACKEND_LIBRARY,
    "torch.backends.cusparselt": SPARSE,
    "torch.backends.kleidiai": BACKEND_LIBRARY,
    "torch.backends.mha": BACKEND_LIBRARY,
    "torch.backends.miopen": ACCELERATOR,
    "torch.backends.mkl": BACKEND_LIBRARY,
    "torch.backends.mkldnn": BACKEND_LIBRARY,
    "torch.backends.nnpack": BACKEND_LIBRARY,
    "torch.backends.openmp": BACKEND_LIBRARY,
    "torch.backends.opt_einsum": BACKEND_LIBRARY,
    "torch.backends.quantized": QUANTIZED,
    "torch.backends.xeon": BACKEND_LIBRARY,
    "torch.backends.xnnpack": BACKEND_LIBRARY,
    "torch.compiler": JIT,
    "torch.contrib": EMPTY,
    "torch.cuda.comm": ACCELERATOR,
    "torch.cuda.gds": ACCELERATOR,
    "torch.cuda.graphs": ACCELERATOR,
    "torch.cuda.jiterator": ACCELERATOR,
    "torch.cuda.memory": ACCELERATOR,
    "torch.cuda.nvtx": ACCELERATOR,
    "torch.cuda.random": ACCELERATOR,
    "torch.cuda.streams": ACCELERATOR,
    "torch.cuda.tunable": ACCELERATOR,
    "torch.distributed.algorithms": DDP_ADDONS,
    "torch.distributed.algorithms.ddp_comm_hooks": FUTURES,
    "torch.distributed.algorithms.join": DDP_ADDONS,
    "torch.distributed.autograd": RPC,
    "torch.distributed.checkpoint": DISTRIBUTED_CHECKPOINT,
    "torch.distributed.device_mesh": PARALLELISM,
    "torch.distributed.elastic": ELASTIC,
    "torch.distributed.fsdp": PARALLELISM,
    "torch.distributed.launch": DEPRECATED,
    "torch.distributed.nn": DISTRIBUTED_AUTOGRAD,
    "torch.distributed.optim": PARALLELISM,
    "torch.distributed.pipelining": PARALLELISM,
    "torch.distributed.rpc": RPC,
    "torch.distributed.tensor": PARALLELISM,
    "torch.distributed.tensor.parallel": PARALLELISM,
    "torch.export": JIT,
    "torch.futures": FUTURES,
    "torch.fx": JIT,
    "torch.fx.experimental": JIT,
    "torch.hub": HUB,
    "torch.library": DISPATCHER,
    "torch.masked": MASKED,
    "torch.monitor": MONITOR,
    "torch.mps": ACCELERATOR,
    "torch.mtia": ACCELERATOR,
    "torch.mtia.memory": ACCELERATOR,
    "torch.nativert": JIT,
    "torch.nested": NESTED,
    "torch.nn.attention.bias": NESTED,
    "torch.nn.attention.experimental": EMPTY,
    "torch.nn.attention.flex_attention": JIT,
    "torch.nn.attention.varlen": ACCELERATOR,
    "torch.nn.intrinsic": QUANTIZED,
    "torch.nn.qat": QUANTIZED,
    "torch.nn.quantizable": QUANTIZED,
    "torch.nn.quantized": QUANTIZED,
    "torch.nn.utils.prune": PRUNE,
    "torch.nn.utils.stateless": DEPRECATED,
    "torch.numa": ELASTIC,
    "torch.onnx": ONNX,
    "torch.overrides": NESTED,
    "torch.package": PACKAGE,
    "torch.quantization": QUANTIZED,
    "torch.quasirandom": SOBOL,
    "torch.return_types": RETURN_TYPES,
    "torch.serialization": SERIALIZATION,
    "torch.signal": WINDOWS,
    "torch.signal.windows": WINDOWS,
    "torch.sparse": SPARSE,
    "torch.storage": STORAGE,
    "torch.torch_version": VERSION,
    "torch.types": INTERNAL,
    "torch.utils.cpp_extension": CPP_EXTENSION,
    "torch.utils.deterministic": UNINITIALIZED,
    "torch.utils.dlpack": DLPACK,
    "torch.utils.jit": JIT,
    "torch.utils.mobile_optimizer": JIT,
    "torch.utils.model_zoo": HUB,
    "torch.utils.module_tracker": MODULE_TRACKER,
    "torch.version": VERSION,
    "torch.xpu": ACCELERATOR,
}

# The torch namespaces a lucid module mirrors, where that is not simply its own name's.
_MIRRORS = {"lucid": ("torch", "torch.functional")}


def reason(module: str, name: str) -> str | None:
    """Why lucid's `module` lacks the torch name `name`, or None when torch lacks it too."""
    torch_path = "torch" + module.removeprefix("lucid")
    for path in _MIRRORS.get(module, (torch_path,)):
        found = EXCLUDED.get(path, {}).get(name)
        if found is not None:
            return found
    return ABSENT.get(f"{torch_path}.{name}")


def attribute_error(module: str, name: str) -> AttributeError:
    """torch's AttributeError for a name `module` lacks, followed by the reason lucid lacks it
    where torch has it: "module 'lucid' has no attribute 'onnx': ONNX export, ..."."""
    message = f"module '{module}' has no attribute '{name}'"
    why = reason(module, name)
    return AttributeError(message if why is None else f"{message}: {why}")
