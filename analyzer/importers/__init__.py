"""Importers: every source format turned into the one graph form the checker reads (ONNX).

- :mod:`analyzer.importers.onnx_files`: ONNX files (and the dispatch to the other importers).
- :mod:`analyzer.importers.fx`: torch.fx ATen dumps (TorchDynamo + AOTAutograd).
- :mod:`analyzer.importers.hlo`: XLA HLO text and ``HloModuleProto`` files (Neuron, JAX).
- :mod:`analyzer.importers.pipeline`: pipeline stages chained into one graph per rank.
"""
