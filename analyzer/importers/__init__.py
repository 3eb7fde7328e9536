"""Importers: every source (ONNX files, torch.fx dumps, XLA HLO) turned into the one graph form
(ONNX) the checker reads."""
