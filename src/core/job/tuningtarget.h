// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/moe/configname.h"
#include "core/moe/framework.h"
#include "core/moe/tritonversion.h"

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <optional>

namespace moetune {

// One fused-MoE shape the server wanted a tuned config for, with where the file must go. The dense
// block-FP8 GEMM (kernel BlockFp8Gemm) has the same mechanism and is described the same way, with its
// N and K; moetune's tuner does not tune it, so it is never a tuning job.
struct TuningTarget {
    enum class Kernel { FusedMoe, BlockFp8Gemm };
    Kernel kernel = Kernel::FusedMoe;
    int denseK = 0; // BlockFp8Gemm: the GEMM's K (its N is name.n)
    Framework framework = Framework::Unknown;
    QString configRoot; // folder holding the triton_* folders (SGLang) or the vLLM configs folder, as logged
    std::optional<TritonVersion> tritonVersion;
    QString tritonFolder;             // wanted folder, e.g. "triton_3_6_0"
    bool tritonFolderMissing = false; // a listing of the host (probe) shows the folder absent; never a log
    bool noConfigLoaded = false;      // the log shows no config of any shape loaded from installFolder()
    QString fallbackFolder;           // "triton_3_4_0" when the log shows a fallback
    ConfigName name;                  // of the up file (down = false)
    bool upMissing = false;
    bool downMissing = false;
    bool upFellBack = false;
    bool downFellBack = false;
    bool upLoaded = false;   // the log shows the server loading the tuned up file of this shape
    bool downLoaded = false; // likewise the _down file

    QString shapeSummary() const; // "E=128, N=768, bf16" (or "E=256, N=256, fp8_w8a8, block [128, 128]")
    // The N's of a shape (docs/servers.md section 2): the file name's (name.n), the per-rank intermediate
    // size after SiLU-and-mul that a tuning spec takes (moe_intermediate_size / TP), and the N of the stored
    // down weight w2 [E, K, N]. They differ for int4_w4a16, which packs two weights per byte: vLLM's file N
    // is twice the packed weight's, SGLang's is the packed weight's.
    int intermediateN() const;
    int weightN() const;
    // The dtypes this file name can stand for: vLLM writes no dtype for int8_w8a8 (it shares the plain
    // bf16/fp16 file), so a plain vLLM name is either; otherwise one.
    QStringList dtypeCandidates() const;
    QString upPath() const; // wanted full paths
    QString downPath() const;
    // The folder the files must be installed into (configRoot[/tritonFolder]).
    QString installFolder() const;
    // Same shape (ConfigName::sameShape) and same place (used to merge up and down into one target).
    bool sameShape(const TuningTarget &other) const;
    // A string equal for two targets exactly when sameShape() holds (for hashing).
    QString shapeKey() const;
    // The log shows that the server reads a separate _down file for this shape (SGLang, down file
    // missing or fallen back): the one decision between tuning "up" and "up+down".
    bool tunesDown() const;
    // A file of this shape is missing or was taken from another Triton's folder.
    bool needsTuning() const { return upMissing || downMissing || upFellBack || downFellBack; }
    // moetune's tuner can tune it (the fused-MoE kernel; not the dense block-FP8 GEMM).
    bool isTunable() const { return kernel == Kernel::FusedMoe; }
    QJsonObject toJson() const;

    bool operator==(const TuningTarget &) const = default;
};

} // namespace moetune
