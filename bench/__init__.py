"""Benchmarks, on top of everything: they enter the product through its public doors
(``app.runtime.generation.run_prompt``, ``app.runtime.loaded_model.load_model``, ``app.edit.rewrite``) and
compare side by side in one run, as ratios and medians, with a JSON record.
"""
