"""The store: every file nllbench writes or reads, one module per kind.

* :mod:`~nllbench.store.scenario`: scenario files (truth, measurements, model), truth CSVs;
* :mod:`~nllbench.store.posterior`: posterior files (one density per step);
* :mod:`~nllbench.store.metrics`: metrics files (one evaluated run);
* :mod:`~nllbench.store.tables`: CSV tables, long NetCDF tables, the per-step cube;
* :mod:`~nllbench.store.atomic`: the one atomic-write helper every output goes through;
* :mod:`~nllbench.store.seeds`: the one rule for a batch's ``seed<N>`` input files;
* :mod:`~nllbench.store.locks`: its locks (one writer per output), non-regular files and full disks;
* :mod:`~nllbench.store.exchange`: replacing a finished directory in one swap, losing nothing;
* :mod:`~nllbench.store.provenance`: software versions and the truth digest.

The NetCDF schema (dimension and variable names, the ragged-array
convention, attributes, schema version) is written down in ``docs/store.md``.
"""

from nllbench.store._netcdf import SCHEMA_VERSION, STATE_NAMES_4D, Declared, SchemaError, check_declared
from nllbench.store.atomic import (
    MARKER,
    Output,
    atomic_directory,
    atomic_file,
    check_beside,
    check_not_an_input,
    check_output,
    check_replaceable,
    committed_together,
    is_temporary,
    partial_name,
    remove_created_dirs,
    remove_stale_temporaries,
    save_figure,
    write_text,
)
from nllbench.store.locks import DiskFull, OutputBusy, check_regular_input, lock_name, non_regular_kind
from nllbench.store.metrics import read_calibration_counts, read_metrics, write_metrics
from nllbench.store.posterior import Posterior, read_posterior, write_posterior
from nllbench.store.provenance import provenance_record, software_versions, truth_digest
from nllbench.store.scenario import (
    SCENARIO_IDENTITY,
    ScenarioData,
    read_scenario,
    run_seed,
    scenario_identity,
    scenario_mismatches,
    write_scenario,
    write_truth_csv,
)
from nllbench.store.seeds import seed_files, seed_number
from nllbench.store.tables import (
    read_step_cube,
    write_csv,
    write_json,
    write_long_table_nc,
    write_rows_csv,
    write_step_cube,
    write_summary_csv,
)

__all__ = [
    "MARKER",
    "DiskFull",
    "OutputBusy",
    "SCENARIO_IDENTITY",
    "SCHEMA_VERSION",
    "STATE_NAMES_4D",
    "Output",
    "Posterior",
    "ScenarioData",
    "SchemaError",
    "Declared",
    "check_declared",
    "atomic_directory",
    "atomic_file",
    "check_not_an_input",
    "check_output",
    "check_regular_input",
    "check_beside",
    "lock_name",
    "non_regular_kind",
    "check_replaceable",
    "committed_together",
    "is_temporary",
    "partial_name",
    "provenance_record",
    "read_calibration_counts",
    "read_metrics",
    "read_posterior",
    "read_scenario",
    "read_step_cube",
    "remove_created_dirs",
    "remove_stale_temporaries",
    "save_figure",
    "run_seed",
    "scenario_identity",
    "scenario_mismatches",
    "seed_files",
    "seed_number",
    "software_versions",
    "truth_digest",
    "write_csv",
    "write_json",
    "write_long_table_nc",
    "write_metrics",
    "write_posterior",
    "write_rows_csv",
    "write_scenario",
    "write_step_cube",
    "write_summary_csv",
    "write_text",
    "write_truth_csv",
]
