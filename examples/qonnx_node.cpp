// SPDX-License-Identifier: Apache-2.0
// qonnx_node: running QONNX operators the way an ONNX graph describes them:
// an op_type, every input a tensor (shape + data), the attributes as strings.
#include <lowbit/lowbit.hpp>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

// A tensor as an ONNX initializer holds it: a shape and row-major data.
struct tensor {
  lowbit::shape shape;
  std::vector<float> data;
  lowbit::strided_view<const float> view() const { return {data.data(), shape}; }
};
struct node {  // op_type, attributes as strings, inputs in order
  std::string op_type;
  std::map<std::string, std::string> attributes;
  std::vector<tensor> inputs;
};

// Sets every attribute by its QONNX name (set_attribute throws lowbit::error
// for an unknown name or a bad value), then runs the operator. The output
// shape is the numpy broadcast of the inputs (output_shape()).
template <class Op, class... Views>
tensor run(Op op, const node& n, const Views&... in) {
  for (const auto& [name, value] : n.attributes) lowbit::set_attribute(op, name, value);
  tensor y{op.output_shape(in...), {}};
  y.data.resize(y.shape.count());
  op(in..., lowbit::strided_view<float>(y.data.data(), y.shape));
  return y;
}

tensor run_node(const node& n) {
  const auto& t = n.inputs;
  const bool quant = n.op_type == "Quant" || n.op_type == "IntQuant", bipolar = n.op_type == "BipolarQuant";
  if ((quant && t.size() != 4) || (bipolar && t.size() != 2)) throw lowbit::error("qonnx_node: wrong input count");
  if (quant)  // x, scale, zeropt, bitwidth
    return run(lowbit::int_quant<>{}, n, t[0].view(), t[1].view(), t[2].view(), t[3].view());
  if (bipolar)  // x, scale
    return run(lowbit::bipolar_quant<>{}, n, t[0].view(), t[1].view());
  throw lowbit::error("qonnx_node: op_type " + n.op_type + " is not handled by this example");
}

int main() {
  // Quant, per channel: x [2, 3], scale [2, 1], narrow signed 4 bits (-7..7).
  const node quant{"Quant",
                   {{"signed", "1"}, {"narrow", "1"}, {"rounding_mode", "ROUND"}},
                   {{{2, 3}, {0.26f, -1.3f, 7.9f, 1.0f, -0.37f, -100.0f}},
                    {{2, 1}, {0.5f, 0.25f}},
                    {{}, {0.0f}},     // zeropt, rank 0
                    {{}, {4.0f}}}};   // bitwidth, rank 0
  // Row 0: x / 0.5 = 0.52, -2.6, 15.8 -> 1, -3, 7 (clamped) -> 0.5, -1.5, 3.5
  // Row 1: x / 0.25 = 4, -1.48, -400 -> 4, -1, -7 (clamped) -> 1, -0.25, -1.75
  const tensor y = run_node(quant);
  const std::vector<float> want{0.5f, -1.5f, 3.5f, 1.0f, -0.25f, -1.75f};

  // BipolarQuant: +scale where x >= 0 (-0 included), else -scale.
  const node bipolar{"BipolarQuant", {}, {{{3}, {0.3f, -0.2f, -0.0f}}, {{}, {2.0f}}}};
  const tensor b = run_node(bipolar);

  // A misspelt attribute is a clear error, not a silent default.
  node bad = quant;
  bad.attributes["rounding_mod"] = "FLOOR";
  bool threw = false;
  try {
    run_node(bad);
  } catch (const lowbit::error& e) {
    std::printf("as expected: %s\n", e.what());
    threw = true;
  }

  for (float v : y.data) std::printf("%g ", v);
  std::printf("| %g %g %g\n", b.data[0], b.data[1], b.data[2]);
  const bool ok = y.shape == lowbit::shape{2, 3} && y.data == want &&
                  b.data == std::vector<float>{2.0f, -2.0f, 2.0f} && threw;
  return ok ? 0 : 1;
}
