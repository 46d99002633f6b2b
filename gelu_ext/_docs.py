"""Every docstring the op spec (``gelu_ext/_spec.py``) hands out, keyed by name.

Kept apart from the spec's records so that a record reads as data.  Four
tables:

* ``UFUNC``       ufunc name -> its docstring (NumPy prepends the signature);
* ``THIN``        derivative ufunc -> the docstring of its thin public
                  function (``grad`` defaulting to 1); a derivative without
                  one has no thin function;
* ``FUNCTIONAL``  ``gelu_ext.torch.functional`` function -> its docstring;
* ``MODULE``      ``gelu_ext.torch.nn`` class -> its docstring.

``tests/test_spec.py`` checks that every key names something the spec makes.
"""

_ULP1 = "<= 1 ULP in float32, <= 2 ULP in float64, tail included."
_MISH = "<= 1 ULP in float32 and float64, tail included."

UFUNC = {
    "relu":
        'max(x, 0) elementwise, as torch.relu; NaN and -0.0 stay as they are.',
    "relu2":
        'squared ReLU, relu(x)^2 (Primer), elementwise, correctly rounded;\n'
        'NaN stays NaN, x <= 0 gives 0.0.',
    "relu6":
        'ReLU6, min(max(x, 0), 6) elementwise, as torch.nn.ReLU6; NaN and -0.0\nstay as they are.',
    "gelu_erf":
        'Exact GELU, x * Phi(x) with Phi the standard normal CDF, elementwise.\n' + _ULP1,
    "gelu_tanh":
        'tanh-approximate GELU, x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).',
    "silu":
        'SiLU (swish), x * sigmoid(x), elementwise.\n' + _ULP1,
    "quick_gelu":
        'quick GELU, x * sigmoid(1.702 x) (CLIP), elementwise.\n' + _ULP1,
    "mish":
        'Mish, x * tanh(softplus(x)), elementwise, as torch.nn.Mish.\n' + _MISH,
    "gelu_erf_bias":
        'gelu_erf(x + b) in one pass; bit-identical to the unfused form.',
    "gelu_tanh_bias":
        'gelu_tanh(x + b) in one pass; bit-identical to the unfused form.',
    "swiglu":
        'SwiGLU, silu(gate) * up in one pass; bit-identical to the unfused\n'
        'np.multiply(silu(gate), up) in float32 and float64.',
    "geglu_erf":
        'GEGLU, gelu_erf(gate) * up in one pass; bit-identical to the unfused\n'
        'form in float32 and float64.',
    "geglu_tanh":
        'GEGLU with tanh GELU, gelu_tanh(gate) * up in one pass; bit-identical\n'
        'to the unfused form in float32 and float64.',
    "relu_grad":
        'g where x > 0, else 0 (0 at x == 0; g for NaN x, as PyTorch).',
    "relu2_grad":
        '2x g where x > 0, else 0 (NaN for NaN x, as PyTorch), correctly rounded.',
    "relu6_grad":
        "g where 0 < x < 6, else 0 (0 for NaN x, as PyTorch's ReLU6).",
    "gelu_erf_grad":
        '(Phi(x) + x phi(x)) * g: the backward pass of exact GELU.',
    "gelu_tanh_grad":
        'd/dx gelu_tanh(x) * g: the backward pass of tanh GELU.',
    "silu_grad":
        '(s + x s (1 - s)) * g, s = sigmoid(x): the backward pass of SiLU.',
    "quick_gelu_grad":
        '(s + 1.702 x s (1 - s)) * g, s = sigmoid(1.702 x): the backward pass\nof quick GELU.',
    "mish_grad":
        '(t + x s (1 - t^2)) * g, t = tanh(softplus(x)), s = sigmoid(x): the\n'
        'backward pass of Mish.',
    "gelu_erf_bias_grad":
        'gelu_erf_grad(x + b, g) in one pass.',
    "gelu_tanh_bias_grad":
        'gelu_tanh_grad(x + b, g) in one pass.',
    "swiglu_dgate":
        "silu_grad(gate, up * g): the gate's gradient of swiglu(gate, up).",
    "geglu_erf_dgate":
        "gelu_erf_grad(gate, up * g): the gate's gradient of geglu_erf.",
    "geglu_tanh_dgate":
        "gelu_tanh_grad(gate, up * g): the gate's gradient of geglu_tanh.",
}

THIN = {
    "relu_grad": '''Backward pass of ReLU: ``grad`` where ``x > 0``, else 0.

    The derivative at 0 is taken as 0, as PyTorch does; NaN in ``x`` gives 0.

    Examples
    --------
    >>> import numpy as np
    >>> relu_grad(np.array([-1.0, 0.0, 2.0]), np.array([5.0, 5.0, 5.0]))
    array([0., 0., 5.])
    ''',
    "relu2_grad": '''Backward pass of squared ReLU, ``relu(x)**2``: ``2 x grad`` where
    ``x > 0``, else 0 (NaN in ``x`` gives NaN, as PyTorch), rounded once.

    Examples
    --------
    >>> import numpy as np
    >>> relu2_grad(np.array([-1.0, 0.0, 3.0]), np.array([5.0, 5.0, 5.0]))
    array([ 0.,  0., 30.])
    ''',
    "relu6_grad": '''Backward pass of ReLU6: ``grad`` where ``0 < x < 6``, else 0.

    As PyTorch's ``hardtanh_backward``: 0 at both kinks and for NaN ``x``.

    Examples
    --------
    >>> import numpy as np
    >>> relu6_grad(np.array([-1.0, 3.0, 6.0]), np.array([5.0, 5.0, 5.0]))
    array([0., 5., 0.])
    ''',
    "silu_grad": '''Backward pass of SiLU: ``silu'(x) * grad`` (``silu'(x)`` if grad is None).

    ``silu'(x) = s + x s (1 - s)`` with ``s = sigmoid(x)``: <= 2 ULP in float32
    in ULPs of the larger of the two terms (silu' crosses zero near
    x = -1.278), <= 4 in float64.  ``silu'(+inf) = 1``, ``silu'(-inf) = 0``.

    Examples
    --------
    >>> import numpy as np
    >>> silu_grad(np.array([0.0, 1.0]))
    array([0.5       , 0.92767051])
    ''',
    "quick_gelu_grad": '''Backward pass of quick GELU, ``x sigmoid(1.702 x)``: its derivative
    ``s + 1.702 x s (1 - s)`` (``s = sigmoid(1.702 x)``) times ``grad``.

    Examples
    --------
    >>> import numpy as np
    >>> quick_gelu_grad(np.array([0.0]))
    array([0.5])
    ''',
    "mish_grad": '''Backward pass of Mish, ``x tanh(softplus(x))``: its derivative
    ``t + x s (1 - t^2)`` (``t = tanh(softplus(x))``, ``s = sigmoid(x)``)
    times ``grad``.

    Examples
    --------
    >>> import numpy as np
    >>> mish_grad(np.array([0.0]))
    array([0.6])
    ''',
}

FUNCTIONAL = {
    "gelu": '''GELU of ``input``, as ``torch.nn.functional.gelu``: exact ``x Phi(x)``
    (<= 1 ULP in float32, also in the negative tail) or the tanh approximation.

    ``bias`` (gelu_ext's addition) computes ``gelu(input + bias)`` in one pass,
    ``bias`` broadcasting against ``input``; its gradient is summed over the
    broadcast axes.

    Examples
    --------
    >>> import torch
    >>> from gelu_ext.torch import functional as GF
    >>> GF.gelu(torch.tensor([-1.0, 2.0], dtype=torch.float64))
    tensor([-0.1587,  1.9545], dtype=torch.float64)
    ''',
    "relu": 'ReLU, ``max(input, 0)``, as ``torch.nn.functional.relu``.',
    "relu2": "Squared ReLU, ``relu(input) ** 2`` (Primer; Hugging Face's ``relu2``).",
    "relu6": 'ReLU6, ``min(max(input, 0), 6)``, as ``torch.nn.functional.relu6``.',
    "silu": 'SiLU (swish), ``input * sigmoid(input)``, as ``torch.nn.functional.silu``.',
    "quick_gelu": ('Quick GELU, ``input * sigmoid(1.702 input)`` (CLIP; '
                  "Hugging Face's ``quick_gelu``)."),
    "swiglu": '''SwiGLU in one pass: ``silu(gate) * up`` (LLaMA's MLP:
    ``down_proj(swiglu(gate_proj(x), up_proj(x)))``); ``gate`` and ``up``
    broadcast, and a broadcast operand's gradient is summed back to its shape.''',
    "geglu": 'GEGLU in one pass: ``gelu(gate, approximate) * up``; see ``swiglu``.',
    "mish": 'Mish, ``input * tanh(softplus(input))``, as ``torch.nn.functional.mish``.',
}

MODULE = {
    "GELU": ("``torch.nn.GELU(approximate=...)`` on gelu_ext's "
            'kernels (exact: <= 1 ULP in float32).'),
    "ReLU": "``torch.nn.ReLU(inplace=...)`` on gelu_ext's kernel.",
    "ReLUSquared": "``relu(x) ** 2`` (Primer, Nemotron; transformers' ``ReLUSquaredActivation``).",
    "ReLU6": "``torch.nn.ReLU6(inplace=...)`` on gelu_ext's kernel.",
    "SiLU": "``torch.nn.SiLU(inplace=...)`` on gelu_ext's kernel.",
    "QuickGELU": "``x * sigmoid(1.702 x)`` (CLIP's activation, Hugging Face's ``quick_gelu``).",
    "Mish": "``torch.nn.Mish(inplace=...)`` on gelu_ext's kernel.",
    "SwiGLU": '``forward(gate, up) = silu(gate) * up`` in one pass.',
    "GEGLU": '``forward(gate, up) = gelu(gate, approximate) * up`` in one pass.',
}
