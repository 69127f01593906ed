// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/job/tunespec.h"
#include "core/job/tuningtarget.h"

#include <QString>

#include <optional>

namespace moetune {

struct Diagnosis;
struct HostProbe;
class MoeModelCatalog;

// The one way a tuning job is built from what moetune knows of a host (issue 45 point 1): "Tune This..."
// on the Diagnose page, "Tune the Served Model" on the Hosts page and the CLI all call buildTuneJob(), so
// the same facts give the same job:
// - the log's target (its up AND _down files, its device_name, its config root) when a diagnosis names
//   one: the finding chosen, else the target of the shape the probed server serves;
// - K and top-k from the probe (the agent's suggested spec or a running server of the shape), else from
//   the models catalogue for the model the log names;
// - without a target, the probe's suggested spec with the device name of the host's GPU (never the
//   synthetic backend's SIMULATED_GPU for a server's files);
// - the probe's interpreter.
struct TuneJob {
    TuneSpec spec;
    std::optional<TuningTarget> target; // the log's target: where the server reads (Preview's folder)
    QString model;                      // the model named by the log, when K and top-k came from the list
    QString catalogFile;                // ... and the catalogue file that gave them ("" = not from the list)
    bool fromProbeOnly = false;         // no diagnosis named a target: the probe's suggested spec
    bool valid() const { return spec.experts > 0; }
};

// The target of the diagnosis that the probe's server serves (tunable; one that needs tuning first), or,
// without a probe that says what is served, the first tunable target that needs tuning.
std::optional<TuningTarget> servedTarget(const Diagnosis &diagnosis, const HostProbe *probe);

// diagnosis/probe may be null; chosen: the finding the user picked ("Tune This..."), else servedTarget().
// catalog: the models list (null = MoeModelCatalog::load()).
TuneJob buildTuneJob(const Diagnosis *diagnosis, const HostProbe *probe,
                     const std::optional<TuningTarget> &chosen = std::nullopt,
                     const MoeModelCatalog *catalog = nullptr);

} // namespace moetune
