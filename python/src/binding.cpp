// The Python extension `flashattn._C`: a thin, framework-agnostic binding of the C++ API.
//
// No PyTorch (or NumPy) header is used, so one build of this module works with any
// PyTorch version. A tensor crosses in one of two forms (or None for an optional tensor
// that is not given):
//   - a framework tensor object, read here through its Python attributes (data_ptr(),
//     dtype, shape, stride(), is_cuda, is_cpu, get_device()) once the framework layer has
//     registered its tensor type and dtypes (register_tensor_type, at import). This is what
//     flashattn's PyTorch layer passes: building a tuple per tensor in Python cost ~1.3 us
//     on an H200 host, and a call passes 5 to 16 tensors.
//   - a plain tuple (data_ptr: int, dtype: str, shape: tuple[int], strides: tuple[int],
//     device_type: int, device_index: int), for callers with no registered framework
//     (strides in elements, device_type 0 = CPU, 1 = CUDA).
// Streams and workspaces cross as integers (addresses). The framework layer
// (flashattn/_runtime.py) owns every allocation.
//
// Each operation is reached through two functions keyed by its name ("forward",
// "forward_varlen", "forward_kvcache", "backward", "backward_varlen", "combine"): run()
// (which sizes and requests its own workspace) and select_kernel(). Arguments arrive as a
// dict whose keys are the C++ field names, so adding a field needs no new signature.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/tuple.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>

#include "flashattn/flashattn.h"

namespace nb = nanobind;
using namespace flashattn;

namespace {

// Raised for ErrorCode::unsupported: a valid request no compiled backend can run. It derives
// from ValueError so callers that treat bad arguments uniformly keep working.
nb::object g_unsupported_error;

[[noreturn]] void raise_status(const Status& status) {
  const std::string message = status.message();
  switch (status.code()) {
    case ErrorCode::invalid_argument:
      throw nb::value_error(message.c_str());
    case ErrorCode::unsupported:
      PyErr_SetString(g_unsupported_error.ptr(), message.c_str());
      throw nb::python_error();
    default:
      throw std::runtime_error(std::string("flashattn ") + error_code_name(status.code()) + ": " + message);
  }
}

[[noreturn]] void raise_type(const std::string& message) { throw nb::type_error(message.c_str()); }

DType parse_dtype(std::string_view name, const char* arg) {
  if (name == "float16") return DType::float16;
  if (name == "bfloat16") return DType::bfloat16;
  if (name == "float32") return DType::float32;
  if (name == "int32") return DType::int32;
  if (name == "bool") return DType::boolean;
  raise_type(std::string(arg) + ": dtype " + std::string(name) +
             " is not one of float16, bfloat16, float32, int32, bool");
}

// Both forms: the library's views hold 1..kMaxRank dimensions.
void check_rank(std::size_t rank, const char* arg) {
  if (rank < 1 || rank > static_cast<std::size_t>(kMaxRank)) {
    throw nb::value_error(
        (std::string(arg) + ": rank " + std::to_string(rank) + " is outside 1.." + std::to_string(kMaxRank))
            .c_str());
  }
}

// One tensor tuple -> TensorView. `arg` names the argument in messages.
TensorView parse_tuple(nb::handle obj, const char* arg) {
  TensorView view;
  nb::tuple t = nb::borrow<nb::tuple>(obj);
  if (t.size() != 6) raise_type(std::string(arg) + ": tensor descriptor must have 6 fields");
  const nb::tuple shape = nb::cast<nb::tuple>(t[2]);
  const nb::tuple strides = nb::cast<nb::tuple>(t[3]);
  if (shape.size() != strides.size()) raise_type(std::string(arg) + ": shape and strides differ in length");
  check_rank(shape.size(), arg);
  view.data = reinterpret_cast<void*>(nb::cast<std::uintptr_t>(t[0]));
  view.dtype = parse_dtype(nb::cast<std::string_view>(t[1]), arg);
  view.rank = static_cast<int>(shape.size());
  for (int i = 0; i < view.rank; ++i) {
    view.shape[i] = nb::cast<std::int64_t>(shape[i]);
    view.stride[i] = nb::cast<std::int64_t>(strides[i]);
  }
  const int device_type = nb::cast<int>(t[4]);
  if (device_type != 0 && device_type != 1) {
    raise_type(std::string(arg) + ": device type " + std::to_string(device_type) +
               " is neither CPU (0) nor CUDA (1)");
  }
  view.device.type = device_type == 0 ? DeviceType::cpu : DeviceType::cuda;
  view.device.index = nb::cast<int>(t[5]);
  return view;
}

// The framework's tensor type, set once by register_tensor_type. Strong references kept for the
// process's life (never released: a module global outlives the interpreter's finalisation).
struct TensorType {
  PyObject* type = nullptr;    // isinstance check
  PyObject* dtypes = nullptr;  // dict: the framework's dtype object -> DType as int
  std::string name;            // for messages, e.g. "torch.Tensor"
};
TensorType g_tensor_type;

// The attribute names a tensor object is read through, interned once (lookups hash nothing).
struct AttributeNames {
  PyObject* data_ptr;
  PyObject* dtype;
  PyObject* shape;
  PyObject* stride;
  PyObject* is_cuda;
  PyObject* is_cpu;
  PyObject* get_device;
  PyObject* device;
};
AttributeNames g_names;

nb::object attribute(nb::handle obj, PyObject* name) {
  PyObject* value = PyObject_GetAttr(obj.ptr(), name);
  if (value == nullptr) throw nb::python_error();
  return nb::steal(value);
}

nb::object call_method(nb::handle obj, PyObject* name) {
  PyObject* value = PyObject_CallMethodObjArgs(obj.ptr(), name, nullptr);
  if (value == nullptr) throw nb::python_error();
  return nb::steal(value);
}

bool truth(const nb::object& value) {
  const int result = PyObject_IsTrue(value.ptr());
  if (result < 0) throw nb::python_error();
  return result == 1;
}

std::int64_t as_int64(PyObject* value) {
  const long long result = PyLong_AsLongLong(value);
  if (result == -1 && PyErr_Occurred()) throw nb::python_error();
  return result;
}

// One tensor object of the registered type -> TensorView. The same checks and messages as
// the tuple form's producer had in Python (dtype, device, rank).
TensorView parse_tensor_object(nb::handle obj, const char* arg) {
  TensorView view;
  const nb::object dtype = attribute(obj, g_names.dtype);
  PyObject* code = PyDict_GetItemWithError(g_tensor_type.dtypes, dtype.ptr());  // borrowed
  if (code == nullptr) {
    if (PyErr_Occurred()) throw nb::python_error();
    raise_type(
        std::string(arg) + ": dtype " + nb::str(dtype).c_str() +
        " is not supported by flashattn (float16, bfloat16, float32; int32 for index tensors; bool for "
        "masks)");
  }
  view.dtype = static_cast<DType>(as_int64(code));
  if (truth(attribute(obj, g_names.is_cuda))) {
    view.device.type = DeviceType::cuda;
    view.device.index = static_cast<int>(as_int64(call_method(obj, g_names.get_device).ptr()));
  } else if (truth(attribute(obj, g_names.is_cpu))) {
    view.device.type = DeviceType::cpu;
    view.device.index = 0;
  } else {
    throw nb::value_error((std::string(arg) + ": device " + nb::str(attribute(obj, g_names.device)).c_str() +
                           " is not supported (cpu or cuda)")
                              .c_str());
  }
  const nb::object shape = attribute(obj, g_names.shape);  // torch.Size: a tuple
  const nb::object strides = call_method(obj, g_names.stride);
  if (!PyTuple_Check(shape.ptr()) || !PyTuple_Check(strides.ptr()))
    raise_type(std::string(arg) + ": shape and stride() must be tuples");
  const Py_ssize_t rank = PyTuple_GET_SIZE(shape.ptr());
  if (rank == 0)
    throw nb::value_error((std::string(arg) + ": expected at least one dimension, got a 0-d tensor").c_str());
  check_rank(static_cast<std::size_t>(rank), arg);
  if (PyTuple_GET_SIZE(strides.ptr()) != rank)
    raise_type(std::string(arg) + ": shape and strides differ in length");
  view.rank = static_cast<int>(rank);
  for (int i = 0; i < view.rank; ++i) {
    view.shape[i] = as_int64(PyTuple_GET_ITEM(shape.ptr(), i));
    view.stride[i] = as_int64(PyTuple_GET_ITEM(strides.ptr(), i));
  }
  // A size-1 dimension's stride is meaningless (PyTorch reports anything there); the
  // library checks the last dimension's unit stride, so state it for size-1 last dims.
  if (view.shape[rank - 1] == 1) view.stride[rank - 1] = 1;
  const nb::object address = call_method(obj, g_names.data_ptr);
  const unsigned long long data = PyLong_AsUnsignedLongLong(address.ptr());
  if (PyErr_Occurred()) throw nb::python_error();
  view.data = reinterpret_cast<void*>(static_cast<std::uintptr_t>(data));
  return view;
}

// A tensor argument in either form -> TensorView; None (or absent) -> "not given".
TensorView parse_view(nb::handle obj, const char* arg) {
  if (!obj.is_valid() || obj.is_none()) return TensorView{};
  if (nb::isinstance<nb::tuple>(obj)) return parse_tuple(obj, arg);
  if (g_tensor_type.type != nullptr) {
    const int is_tensor = PyObject_IsInstance(obj.ptr(), g_tensor_type.type);
    if (is_tensor < 0) throw nb::python_error();
    if (is_tensor == 1) return parse_tensor_object(obj, arg);
    raise_type(std::string(arg) + ": expected a " + g_tensor_type.name + " or None, got " +
               Py_TYPE(obj.ptr())->tp_name);
  }
  raise_type(std::string(arg) + ": expected a tensor descriptor tuple or None, got " +
             Py_TYPE(obj.ptr())->tp_name);
}

// register_tensor_type(type, name, dtypes): tensors of `type` (named `name` in messages) may be
// passed as they are; `dtypes` maps the framework's dtype objects to "float16", "bfloat16",
// "float32" or "int32". Called once, at import, by the framework layer.
void register_tensor_type(nb::handle type, const std::string& name, nb::dict dtypes) {
  if (!PyType_Check(type.ptr())) raise_type("register_tensor_type: type must be a class");
  nb::dict codes;
  for (auto [key, value] : dtypes) {
    codes[key] = static_cast<int>(parse_dtype(nb::cast<std::string_view>(value), "register_tensor_type"));
  }
  Py_XDECREF(g_tensor_type.type);
  Py_XDECREF(g_tensor_type.dtypes);
  g_tensor_type.type = nb::borrow(type).release().ptr();
  g_tensor_type.dtypes = codes.release().ptr();
  g_tensor_type.name = name;
}

// Typed access to the argument dict: missing keys and None mean "default". Keys are looked up
// as interned strings (made once per key), not built from the C string on every lookup.
struct Args {
  nb::dict d;

  static PyObject* key_object(const char* key) {
    // The keys are string literals: their addresses identify them. Filled with the GIL held.
    static std::unordered_map<const char*, PyObject*> interned;
    auto [it, inserted] = interned.try_emplace(key, nullptr);
    if (inserted) it->second = PyUnicode_InternFromString(key);  // kept for the process's life
    if (it->second == nullptr) throw nb::python_error();
    return it->second;
  }
  nb::handle get(const char* key) const {
    PyObject* item = PyDict_GetItemWithError(d.ptr(), key_object(key));  // borrowed, may be null
    if (item == nullptr && PyErr_Occurred()) throw nb::python_error();
    return nb::handle(item);
  }
  bool has(const char* key) const {
    nb::handle h = get(key);
    return h.is_valid() && !h.is_none();
  }
  // `name` is what messages call the argument where the caller's name differs from the field's.
  TensorView view(const char* key, const char* name = nullptr) const {
    return parse_view(get(key), name != nullptr ? name : key);
  }
  template <typename T>
  T value(const char* key, T fallback) const {
    return has(key) ? nb::cast<T>(get(key)) : fallback;
  }
};

AttentionOptions parse_options(const Args& a) {
  AttentionOptions o;
  if (a.has("softmax_scale")) o.softmax_scale = a.value<float>("softmax_scale", 0.f);
  o.causal = a.value<bool>("causal", false);
  o.window.left = a.value<std::int64_t>("window_left", -1);
  o.window.right = a.value<std::int64_t>("window_right", -1);
  o.softcap = a.value<float>("softcap", 0.f);
  o.alibi_slopes = a.view("alibi_slopes");
  o.dropout.p = a.value<float>("dropout_p", 0.f);
  o.dropout.seed = a.value<std::uint64_t>("dropout_seed", 0);
  o.dropout.offset = a.value<std::uint64_t>("dropout_offset", 0);
  o.sink = a.view("sink", "learnable_sink");
  o.bias = a.view("attn_bias");
  return o;
}

ForwardArgs parse_forward(const Args& a) {
  ForwardArgs f;
  f.q = a.view("q");
  f.k = a.view("k");
  f.v = a.view("v");
  f.out = a.view("out");
  f.lse = a.view("lse");
  f.options = parse_options(a);
  f.num_splits = a.value<int>("num_splits", 0);
  return f;
}

VarlenForwardArgs parse_forward_varlen(const Args& a) {
  VarlenForwardArgs f;
  f.q = a.view("q");
  f.k = a.view("k");
  f.v = a.view("v");
  f.cu_seqlens_q = a.view("cu_seqlens_q");
  f.cu_seqlens_k = a.view("cu_seqlens_k");
  f.max_seqlen_q = a.value<std::int64_t>("max_seqlen_q", 0);
  f.max_seqlen_k = a.value<std::int64_t>("max_seqlen_k", 0);
  f.seqused_q = a.view("seqused_q");
  f.seqused_k = a.view("seqused_k");
  f.block_table = a.view("block_table");
  f.out = a.view("out");
  f.lse = a.view("lse");
  f.options = parse_options(a);
  f.num_splits = a.value<int>("num_splits", 0);
  return f;
}

KVCacheForwardArgs parse_forward_kvcache(const Args& a) {
  KVCacheForwardArgs f;
  f.q = a.view("q");
  f.k_cache = a.view("k_cache");
  f.v_cache = a.view("v_cache");
  f.block_table = a.view("block_table");
  f.cache_seqlens = a.view("cache_seqlens");
  f.cache_batch_idx = a.view("cache_batch_idx");
  f.cache_leftpad = a.view("cache_leftpad");
  f.k_new = a.view("k_new", "k");
  f.v_new = a.view("v_new", "v");
  f.rotary_cos = a.view("rotary_cos");
  f.rotary_sin = a.view("rotary_sin");
  f.rotary_interleaved = a.value<bool>("rotary_interleaved", true);
  f.num_splits = a.value<int>("num_splits", 0);
  f.out = a.view("out");
  f.lse = a.view("lse");
  f.options = parse_options(a);
  return f;
}

BackwardArgs parse_backward(const Args& a) {
  BackwardArgs b;
  b.dout = a.view("dout");
  b.q = a.view("q");
  b.k = a.view("k");
  b.v = a.view("v");
  b.out = a.view("out");
  b.lse = a.view("lse");
  b.dq = a.view("dq");
  b.dk = a.view("dk");
  b.dv = a.view("dv");
  b.dsink = a.view("dsink");
  b.options = parse_options(a);
  b.deterministic = a.value<bool>("deterministic", false);
  return b;
}

VarlenBackwardArgs parse_backward_varlen(const Args& a) {
  VarlenBackwardArgs b;
  b.dout = a.view("dout");
  b.q = a.view("q");
  b.k = a.view("k");
  b.v = a.view("v");
  b.out = a.view("out");
  b.lse = a.view("lse");
  b.cu_seqlens_q = a.view("cu_seqlens_q");
  b.cu_seqlens_k = a.view("cu_seqlens_k");
  b.max_seqlen_q = a.value<std::int64_t>("max_seqlen_q", 0);
  b.max_seqlen_k = a.value<std::int64_t>("max_seqlen_k", 0);
  b.seqused_q = a.view("seqused_q");
  b.seqused_k = a.view("seqused_k");
  b.dq = a.view("dq");
  b.dk = a.view("dk");
  b.dv = a.view("dv");
  b.dsink = a.view("dsink");
  b.options = parse_options(a);
  b.deterministic = a.value<bool>("deterministic", false);
  return b;
}

CombineArgs parse_combine(const Args& a) {
  CombineArgs c;
  c.out_partial = a.view("out_partial");
  c.lse_partial = a.view("lse_partial");
  c.out = a.view("out");
  c.lse = a.view("lse");
  return c;
}

Backend parse_backend(const std::string& name) {
  if (name == "auto" || name == "automatic") return Backend::automatic;
  if (name == "cpu_reference") return Backend::cpu_reference;
  if (name == "cpu_tiled") return Backend::cpu_tiled;
  if (name == "cuda_sm80") return Backend::cuda_sm80;
  if (name == "cuda_sm90") return Backend::cuda_sm90;
  throw nb::value_error(
      ("backend: '" + name + "' is not one of auto, cpu_reference, cpu_tiled, cuda_sm80, cuda_sm90").c_str());
}

// The workspace is filled in by run() once its size is known.
ExecutionContext make_context(const std::string& backend, std::uintptr_t stream, int num_threads) {
  ExecutionContext ctx;
  ctx.backend = parse_backend(backend);
  ctx.stream = reinterpret_cast<void*>(stream);
  ctx.num_threads = num_threads;
  return ctx;
}

// Parses the op's arguments and calls `fn(parsed_args)` with the concrete type.
template <typename Fn>
auto with_parsed(const std::string& op, const Args& a, Fn&& fn) {
  if (op == "forward") return fn(parse_forward(a));
  if (op == "forward_varlen") return fn(parse_forward_varlen(a));
  if (op == "forward_kvcache") return fn(parse_forward_kvcache(a));
  if (op == "backward") return fn(parse_backward(a));
  if (op == "backward_varlen") return fn(parse_backward_varlen(a));
  if (op == "combine") return fn(parse_combine(a));
  throw nb::value_error(("flashattn._C: unknown operation '" + op + "'").c_str());
}

template <typename A>
Status call_run(const A& args, const ExecutionContext& ctx) {
  if constexpr (std::is_same_v<A, ForwardArgs>) return forward(args, ctx);
  if constexpr (std::is_same_v<A, VarlenForwardArgs>) return forward_varlen(args, ctx);
  if constexpr (std::is_same_v<A, KVCacheForwardArgs>) return forward_kvcache(args, ctx);
  if constexpr (std::is_same_v<A, BackwardArgs>) return backward(args, ctx);
  if constexpr (std::is_same_v<A, VarlenBackwardArgs>) return backward_varlen(args, ctx);
  if constexpr (std::is_same_v<A, CombineArgs>) return combine(args, ctx);
}

// Runs one operation, its workspace sized and requested in the same call (the arguments are parsed
// once, Python is entered once per call). `allocate(bytes)` returns (owner, address): a
// buffer of at least `bytes` bytes at a 256-byte aligned address, kept alive until the launch is issued
// (a stream-ordered allocator then reuses it only after the work on the stream).
void run(const std::string& op, nb::dict args, const std::string& backend, std::uintptr_t stream,
         nb::callable allocate, int num_threads) {
  ExecutionContext ctx = make_context(backend, stream, num_threads);
  const Status status = with_parsed(op, Args{args}, [&](const auto& parsed) {
    std::size_t bytes = 0;
    if (Status sized = workspace_size(parsed, ctx, &bytes); !sized.ok()) return sized;
    nb::object owner;
    if (bytes > 0) {
      const nb::tuple buffer = nb::cast<nb::tuple>(allocate(bytes));
      owner = buffer[0];
      ctx.workspace = reinterpret_cast<void*>(nb::cast<std::uintptr_t>(buffer[1]));
      ctx.workspace_bytes = bytes;
    }
    nb::gil_scoped_release release;
    return call_run(parsed, ctx);
  });
  if (!status.ok()) raise_status(status);
}

// (ok, backend, kernel, reason): never raises for "no backend can run this"; that is the answer.
nb::tuple query_select_kernel(const std::string& op, nb::dict args, const std::string& backend) {
  const ExecutionContext ctx = make_context(backend, 0, 0);
  KernelChoice choice;
  const Status status =
      with_parsed(op, Args{args}, [&](const auto& parsed) { return select_kernel(parsed, ctx, &choice); });
  if (status.code() == ErrorCode::invalid_argument) raise_status(status);
  return nb::make_tuple(status.ok(), std::string(backend_name(choice.backend)), std::string(choice.kernel),
                        std::string(status.ok() ? choice.reason : status.message()));
}

nb::tuple device_info(int index) {
  CudaDeviceInfo info;
  const Status status = cuda_device_info(index, &info);
  if (!status.ok()) raise_status(status);
  return nb::make_tuple(info.index, std::string(info.name), info.compute_capability, info.multiprocessors,
                        info.memory_bytes);
}

}  // namespace

NB_MODULE(_C, m) {
  m.doc() = "flashattn C++ API binding (framework-agnostic; see flashattn.interface for PyTorch)";
  g_unsupported_error = nb::steal(PyErr_NewExceptionWithDoc(
      "flashattn._C.UnsupportedError",
      "A valid request that no backend compiled into this build can run (the message says why).",
      PyExc_ValueError, nullptr));
  m.attr("UnsupportedError") = g_unsupported_error;

  m.def("version", [] { return std::string(version()); });
  m.def("with_cuda", [] { return static_cast<bool>(FLASHATTN_WITH_CUDA); });
  m.def("backend_compiled", [](const std::string& name) { return backend_compiled(parse_backend(name)); });
  m.def("cuda_device_count", [] { return cuda_device_count(); });
  m.def("cuda_device_info", &device_info, nb::arg("index"));
  g_names = AttributeNames{PyUnicode_InternFromString("data_ptr"),   PyUnicode_InternFromString("dtype"),
                           PyUnicode_InternFromString("shape"),      PyUnicode_InternFromString("stride"),
                           PyUnicode_InternFromString("is_cuda"),    PyUnicode_InternFromString("is_cpu"),
                           PyUnicode_InternFromString("get_device"), PyUnicode_InternFromString("device")};
  m.def("register_tensor_type", &register_tensor_type, nb::arg("type"), nb::arg("name"), nb::arg("dtypes"));
  m.def("run", &run, nb::arg("op"), nb::arg("args"), nb::arg("backend"), nb::arg("stream"),
        nb::arg("allocate"), nb::arg("num_threads") = 0);
  m.def("select_kernel", &query_select_kernel, nb::arg("op"), nb::arg("args"), nb::arg("backend") = "auto");
}
