"""Benchmarks, on top of everything: they enter the product through its public doors
(``app.generation.run_prompt``, ``app.loaded_model.load_model``, ``app.rewrite``) and
compare side by side in one run, as ratios and medians, with a JSON record.
"""
