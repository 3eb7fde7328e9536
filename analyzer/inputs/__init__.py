"""Input relations: how graph inputs and weights of the sequential graph live on the ranks.

- :mod:`analyzer.inputs.infer`: the spec file, and relations inferred from names, shapes and
  stored values.
- :mod:`analyzer.inputs.load`: the graphs of a check loaded and paired with their input
  relations (a :class:`analyzer.model.CheckInput`).
"""
