// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/diagnosis/findingwording.h"

#include "core/diagnosis/logpath.h"
#include "core/diagnosis/logtime.h"
#include "core/diagnosis/moekernelverdict.h"
#include "core/job/tunespec.h"
#include "core/moe/precompiledregex.h"

#include <QRegularExpression>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

// The agent's tune spec for this target, as far as the log tells it (hidden size and top-k are not in
// the log: the model's config.json has them, and the Hosts page's probe fills them in).
QString tuneCommand(const TuneSpec &spec) {
    return u"moetune-agent tune with spec "_s + spec.shapeJson() +
           u" plus K and topk from the model's config.json"_s;
}

QString deviceText(const TuningTarget &t) {
    return t.name.deviceName.isEmpty() ? u"an unnamed GPU"_s : t.name.deviceName;
}

QString tritonText(const TuningTarget &t) {
    return t.tritonVersion ? u"Triton "_s + t.tritonVersion->toString() : u"the installed Triton"_s;
}

QString installText(const TuningTarget &t) {
    const QString folder = t.installFolder();
    return folder.isEmpty() ? u"the server's config folder"_s : folder + u'/';
}

// "E=...json" or "E=...json and E=..._down.json": the files a tuning job for t writes.
QString filesText(const TuningTarget &t, const TuneSpec &spec) {
    QString up = fileNameOf(t.upPath());
    if (!spec.upAndDown)
        return up;
    return up + u" and "_s + fileNameOf(t.downPath());
}

// What the log (or a listing of the host) tells about the installed Triton's folder: a log names files
// that were not found, never a folder's absence.
QString folderNoteFor(const TuningTarget &t) {
    if (t.tritonFolder.isEmpty())
        return {};
    if (t.tritonFolderMissing)
        return u" A listing of the host shows that "_s + t.tritonFolder +
               u", the folder of the installed "_s + tritonText(t) + u", does not exist."_s;
    if (t.noConfigLoaded)
        return u" No config of any shape was loaded from "_s + t.tritonFolder +
               u" (the folder of the installed "_s + tritonText(t) +
               u") in this log; whether that folder exists and holds other shapes only a listing of the host "
               "(probe) can tell."_s;
    return {};
}

// Which N and dtype a tuning job must take where the file name alone misleads
// (docs/servers.md sections 1, 2).
QString shapeNoteFor(const TuningTarget &t) {
    QString note;
    if (t.intermediateN() != t.name.n || t.weightN() != t.name.n)
        note +=
            u" int4_w4a16 packs two weights per byte: the file's N=%1 is %2, the packed down weight's N is "
            "%3, and the layer's N (moe_intermediate_size / TP, what the tuning spec takes) is %4."_s
                .arg(t.name.n)
                .arg(t.framework == Framework::VLLM ? u"twice the packed weight's"_s
                                                    : u"the packed weight's"_s)
                .arg(t.weightN())
                .arg(t.intermediateN());
    if (const QStringList dtypes = t.dtypeCandidates(); dtypes.size() > 1 && dtypes.contains(u"int8_w8a8"_s))
        note += u" vLLM writes no dtype into the name of an int8_w8a8 config, so this file serves bf16/fp16 "
                "and int8_w8a8 layers alike: if the served model is W8A8 int8, tune dtype int8_w8a8."_s;
    return note;
}

void describeBlockFp8(Finding &f, const MoeMessage &msg) {
    static const QRegularExpression nk = precompiledRegex(u"N=(\\d+),K=(\\d+),device_name=([^,]*)"_s);
    const QRegularExpressionMatch m = nk.match(fileNameOf(msg.path));
    f.title = m.hasMatch() ? u"Untuned W8A8 block-FP8 GEMM: N=%1, K=%2 on %3"_s.arg(
                                 m.captured(1), m.captured(2),
                                 m.captured(3).isEmpty() ? u"an unnamed GPU"_s : m.captured(3))
                           : u"Untuned W8A8 block-FP8 GEMM"_s;
    f.explanation = u"The dense block-quantised FP8 GEMM (not the MoE kernel) found no tuned config at "_s +
                    msg.path + u" and runs default tile sizes, which can be markedly slower."_s;
    f.advice = u"Tune it with SGLang's block-wise FP8 tuning script (benchmark/kernels/quantization/) and "
               "put the resulting "_s +
               fileNameOf(msg.path) + u" into "_s + folderOf(msg.path) +
               u"/. moetune tunes the fused-MoE kernel only."_s;
}

// "E=128, N=768, fp8_w8a8 on an unknown GPU (its name was cut from the paste)"
QString partialShape(const PartialConfigName &p) {
    QString gpu;
    if (p.deviceUnreadable)
        gpu = *p.deviceName + u" (a GPU the server could not name)"_s;
    else if (!p.deviceName)
        gpu = u"an unknown GPU"_s;
    else
        gpu = p.deviceName->isEmpty() ? u"an unnamed GPU"_s : *p.deviceName;
    return p.shapeText() + u" on "_s + gpu;
}

// A lookup whose file name a paste shortened, or whose GPU name the server could not read: what the
// line does say, what it does not, and how to find that out (docs/servers.md section 1).
void describePartial(Finding &f, const MoeMessage &msg, const PartialConfigName &p, const QString &server) {
    const QStringList unknown = p.unknownParts();
    const bool used =
        msg.kind == MoeMessage::Kind::ConfigUsed || msg.kind == MoeMessage::Kind::ConfigUsedVllm;
    const bool down =
        p.down || msg.kind == MoeMessage::Kind::DownMissing || msg.kind == MoeMessage::Kind::DownReusesUp;
    const QString shape = partialShape(p);
    if (!p.experts && !p.n) {
        f.title = (used ? u"Tuned MoE config in use; the pasted line names no shape"_s
                        : u"MoE config lookup that names no shape (cut from the paste)"_s);
        f.explanation = server +
                        (used ? u" loaded a tuned fused-MoE config, "_s
                              : u" looked for a tuned fused-MoE config and did not find it, "_s) +
                        u"but this copy of the line shows the file name as "_s + fileNameOf(msg.path) +
                        u": the experts (E) and N were cut, so there is no shape to tune here."_s;
        f.advice =
            u"Find the whole line in the server's own log (Diagnose Host reads it), or read E from the "
            "model's config.json (n_routed_experts / num_local_experts) and N from "
            "moe_intermediate_size divided by the tensor-parallel size."_s;
        return;
    }
    if (p.deviceUnreadable && unknown.isEmpty()) {
        f.title = (used ? u"Tuned MoE config in use for "_s : u"No tuned MoE config for "_s) + shape;
        f.explanation =
            server + u" asked PyTorch for the GPU's name and got \""_s + *p.deviceName +
            u"\", the name a driver or PyTorch too old for this GPU gives it, so it "_s +
            (used ? u"loaded "_s : u"looked for "_s) + msg.path +
            u". No config anyone ships carries that name, and a config tuned for this GPU under its real "
            u"name "
            "is not found either. moetune offers no tuning job for it: the name says nothing about the GPU."_s;
        f.advice =
            u"Find out which GPU this is (nvidia-smi -L on the host) and update the NVIDIA driver and "
            "PyTorch until torch.cuda.get_device_name() names it; then diagnose the new log, which names "
            "the file to tune."_s;
        return;
    }
    f.title = (used ? u"Tuned MoE config in use for "_s : u"No tuned MoE config for "_s) + shape +
              (down ? u" (down projection)"_s : QString()) + u"; "_s + unknown.join(u", "_s) +
              u" not in the paste"_s;
    QString found = used ? u" loaded a tuned fused-MoE config"_s
                         : u" found no tuned fused-MoE config and runs built-in default tile sizes"_s;
    if (msg.kind == MoeMessage::Kind::DownReusesUp)
        found = u" found no tuned down-projection config and runs the down GEMM with the tuned up-projection "
                "config, without TMA"_s;
    f.explanation = server + found + u". The line was shortened where it was pasted (\""_s +
                    fileNameOf(msg.path) + u"\"): it says "_s + p.shapeText() + u", but not the "_s +
                    unknown.join(u", "_s) +
                    u". moetune does not guess them, so this finding is no tuning job yet."_s;
    if (p.folderElided)
        f.explanation += u" The folder was cut as well."_s;
    QStringList ask;
    if (!p.deviceName)
        ask << u"the GPU name as the server writes it (torch.cuda.get_device_name() with spaces as "
               "underscores; Diagnose Host shows it)"_s;
    if (!p.experts || !p.n)
        ask << u"E and N (the model's config.json: experts, and moe_intermediate_size / TP)"_s;
    if (!p.dtype)
        ask << u"the dtype (the model's quantisation: fp8_w8a8 for FP8 checkpoints, none for bf16)"_s;
    if (!p.blockShape)
        ask << u"the block shape (weight_block_size in the model's quantization_config)"_s;
    f.advice = u"Find out "_s + ask.join(u"; "_s) +
               u". The whole line in the server's own log says all of it: Diagnose Host reads that log, and "
               "its finding is a tuning job."_s;
}

} // namespace

void FindingWording::describeMoe(Finding &f, const MoeMessage &msg) {
    const QString server = f.target && f.target->framework != Framework::Unknown
                               ? frameworkName(f.target->framework)
                               : u"The server"_s;
    switch (msg.kind) {
    case MoeMessage::Kind::Deterministic:
        f.title = u"Deterministic inference forces default MoE kernel configs"_s;
        f.explanation =
            u"Deterministic inference is on, so SGLang ignores any tuned fused-MoE config and runs its "
            "built-in defaults. Tuning changes nothing while this mode is on."_s;
        f.advice = u"If you do not need reproducible outputs, restart the server without "
                   "--enable-deterministic-inference; otherwise no tuning action applies."_s;
        return;
    case MoeMessage::Kind::ConfigUsed:
    case MoeMessage::Kind::ConfigUsedVllm: {
        if (const std::optional<PartialConfigName> partial = PartialConfigName::parse(msg.path);
            partial && !f.target) {
            describePartial(f, msg, *partial, server);
            f.advice = u"Nothing to do for this shape."_s;
            return;
        }
        const QString shape =
            f.target ? f.target->shapeSummary() + u" on "_s + deviceText(*f.target) : fileNameOf(msg.path);
        const bool both = f.target && f.target->upLoaded && f.target->downLoaded;
        f.title = u"Tuned MoE config in use for "_s + shape + (both ? u" (up and down)"_s : QString());
        f.explanation = u"The server loaded the tuned fused-MoE kernel config "_s + msg.path +
                        (both ? u" and its _down file"_s : QString()) +
                        u". The ranks listed printed the load: after a push and a restart, that is the proof "
                        "that the new file is the one in use."_s;
        f.advice = u"Nothing to do for this shape."_s;
        return;
    }
    case MoeMessage::Kind::DefaultNoPath:
        f.title = u"Untuned MoE kernel config (the log does not name the shape)"_s;
        f.explanation =
            u"The server runs built-in default tile sizes for a fused-MoE layer, but this build or log level "
            "prints the warning without the config file it looked for, so the log does not name the shape "
            "(E, N, dtype, device) to tune."_s;
        f.advice = u"Probe the host (the Hosts page, or moetune-cli probe HOST) to read the served model's "
                   "shape from its config.json (experts, moe_intermediate_size / TP, quantisation) and tune "
                   "that; or restart the server at a log level that prints the config path."_s;
        return;
    case MoeMessage::Kind::BlockFp8Default:
        describeBlockFp8(f, msg);
        return;
    default:
        break;
    }
    if (!f.target) {
        if (const std::optional<PartialConfigName> partial = PartialConfigName::parse(msg.path)) {
            describePartial(f, msg, *partial, server);
            return;
        }
        f.title = u"No tuned MoE config for "_s + fileNameOf(msg.path);
        f.explanation =
            u"The server found no tuned fused-MoE config at "_s + msg.path +
            u" and uses default kernel settings; the file name could not be read as a config name."_s;
        f.advice = u"Check the path in the log line; tune the shape it names and install the file there."_s;
        return;
    }
    const TuningTarget &t = *f.target;
    // One decision about up vs up+down: the spec's, which the Tune page runs as well.
    const TuneSpec spec = TuneSpec::fromTarget(t);
    const bool down = ConfigName::parse(msg.path).value_or(ConfigName{}).down;
    const QString shape = t.shapeSummary() + u" on "_s + deviceText(t);
    QString folderNote = folderNoteFor(t) + shapeNoteFor(t);
    if (const std::optional<PartialConfigName> partial = PartialConfigName::parse(msg.path);
        partial && partial->folderElided)
        folderNote += u" The paste cut the folder (\""_s + folderOf(msg.path) +
                      u"/\"): where this server reads its configs is not in this line; Diagnose Host or the "
                      "server's own log shows it."_s;
    switch (msg.kind) {
    case MoeMessage::Kind::Fallback:
        f.title = u"MoE config for "_s + shape + (down ? u" (down)"_s : QString()) + u" taken from "_s +
                  t.fallbackFolder + u" ("_s + tritonText(t) + u" installed)"_s;
        f.explanation = server + u" found no config for this shape under "_s + t.tritonFolder +
                        u", the folder of the installed "_s + tritonText(t) +
                        u", and used the one tuned under Triton "_s + msg.fallbackVersion + u" ("_s +
                        msg.fallbackPath +
                        u"). A config tuned for another Triton release may be slower under the installed "
                        "compiler; retuning under "_s +
                        tritonText(t) + u" removes the warning."_s + folderNote;
        f.advice = u"Retune under "_s + tritonText(t) + u" ("_s + tuneCommand(spec) + u") and install "_s +
                   filesText(t, spec) + u" into "_s + installText(t) + u"; as a stopgap, copying "_s +
                   msg.fallbackPath + u" there silences the fallback."_s;
        return;
    case MoeMessage::Kind::DownReusesUp:
    case MoeMessage::Kind::DownMissing:
        f.title = u"No tuned down-projection config for "_s + shape;
        f.explanation =
            server +
            u" tunes the down GEMM of the MoE layer separately (the *_down.json file). It found none at "_s +
            msg.path +
            (msg.kind == MoeMessage::Kind::DownReusesUp
                 ? u", so the down GEMM reuses the tuned up-projection config without TMA, which is rarely "
                   "the best for a GEMM of a different shape."_s
                 : u", so the down GEMM reuses the up config (down_moe=False), which is rarely the best "
                   "for a GEMM of a different shape."_s) +
            folderNote;
        f.advice = u"Tune up and down together ("_s + tuneCommand(spec) + u") and install "_s +
                   filesText(t, spec) + u" into "_s + installText(t) +
                   u"; up and down configs must share BLOCK_SIZE_M for every batch size."_s;
        return;
    default:
        break;
    }
    f.title = u"No tuned MoE config for "_s + shape + (down ? u" (down projection)"_s : QString());
    QString where = msg.path;
    if (!msg.path2.isEmpty())
        where += u" or "_s + msg.path2;
    f.explanation =
        server +
        u" found no tuned fused-MoE kernel config for this shape on this GPU and runs "
        "built-in default tile sizes instead. It looked for "_s +
        where + u". A tuned config is commonly 10-60% faster for this kernel, most at larger batch sizes."_s +
        folderNote;
    QString advice = u"Tune this shape on "_s + deviceText(t) + u" ("_s + tuneCommand(spec) +
                     u") and install "_s + filesText(t, spec) + u" into "_s + installText(t);
    if (t.framework == Framework::VLLM)
        advice += u" (or into the folder VLLM_TUNED_CONFIG_FOLDER names)"_s;
    advice += u", then restart the server."_s;
    f.advice = advice;
}

void FindingWording::describeFolder(Finding &f, const FolderLookups &lookups) {
    const TuningTarget &t = lookups.target;
    const QString version = t.tritonVersion ? t.tritonVersion->toString() : t.tritonFolder;
    f.title = u"No MoE config loaded from "_s + t.tritonFolder + u", the folder of the installed Triton "_s +
              version;
    f.explanation = u"The server runs Triton "_s + version + u" and looks for tuned MoE configs under "_s +
                    t.installFolder() + u"/. All "_s + QString::number(lookups.files.size()) +
                    u" lookups there failed and none succeeded, so no shape has a config tuned under this "
                    "Triton. A log names files that were not found: whether the folder exists (holding other "
                    "shapes' files) only a listing of the host (probe) shows."_s;
    if (!lookups.fallbacks.isEmpty())
        f.explanation +=
            u" The server fell back to "_s + lookups.fallbacks.join(u", "_s) + u" where it could."_s;
    QStringList files = lookups.files;
    const qsizetype more = files.size() - 8;
    if (more > 0)
        files.resize(8);
    f.advice = u"Tune these shapes under Triton "_s + version + u" and install the results into "_s +
               t.installFolder() + u"/ (created if missing): "_s + files.join(u", "_s) +
               (more > 0 ? u" and "_s + QString::number(more) + u" more"_s : QString()) + u'.';
}

void FindingWording::describeStart(Finding &f, const ServerStart &start, int number, int total) {
    const QString server =
        start.framework != Framework::Unknown ? frameworkName(start.framework) : u"The server"_s;
    auto clockOf = [](const QString &printed) {
        const auto t = LogTime::parse(printed.toLatin1());
        return t ? t->clock() : printed;
    };
    const QString which =
        total > 1 ? u" This log holds %1 server starts; this is start %2%3."_s.arg(total).arg(number).arg(
                        start.line > 0 ? u", from line "_s + QString::number(start.line) : QString())
                  : QString();
    QString began;
    if (start.line > 0)
        began = u" It started on line "_s + QString::number(start.line) +
                (start.time.isEmpty() ? QString() : u" at "_s + clockOf(start.time)) + u'.';
    else
        began =
            u" Its start line (SGLang's server_args, vLLM's \"API server version\") is not in this log."_s;
    if (start.readyLine > 0) {
        f.rule = u"server-ready"_s;
        f.id = u"server-ready"_s;
        const QString at =
            start.readyTime.isEmpty()
                ? QString()
                : (start.readyTimeFromEarlierLine ? u" at about "_s : u" at "_s) + clockOf(start.readyTime);
        f.title = u"Server ready"_s +
                  (at.isEmpty() ? u" (line "_s + QString::number(start.readyLine) + u')' : at) +
                  (start.secondsToReady ? u", %1 s after its start"_s.arg(*start.secondsToReady) : QString());
        f.explanation =
            server + u" printed that it is ready on line "_s + QString::number(start.readyLine) + at +
            (start.readyTimeFromEarlierLine ? u" (the line has no time; that of the line before it)"_s
                                            : QString()) +
            u" and serves requests from then on."_s + began +
            (start.secondsToReady
                 ? u" Startup (loading the weights, the KV cache, CUDA graphs) took %1 s."_s.arg(
                       *start.secondsToReady)
                 : QString()) +
            which;
        f.advice = total > 1
                       ? u"After a push and a restart, the findings of this start are the ones that show "
                         "whether a warning is gone; earlier starts' findings say so in their title."_s
                       : u"Nothing to do."_s;
        return;
    }
    f.rule = u"server-start"_s;
    f.id = u"server-start"_s;
    f.title = u"Server started"_s + (start.time.isEmpty() ? QString() : u" at "_s + clockOf(start.time)) +
              u", not ready yet in this log"_s;
    f.explanation =
        server + u" began a start on line "_s + QString::number(start.line) +
        u" and has printed no readiness line since (SGLang: \"The server is fired up and ready to "
        "roll!\", vLLM: \"Starting vLLM API server ... on http://...\" or \"Application startup "
        "complete.\")."_s +
        which;
    f.advice = u"Wait for the readiness line before judging this start: a server still starting may not have "
               "loaded every MoE layer yet (a log cut short or a crash also stops here)."_s;
}

QString FindingWording::summary(const Diagnosis &d) {
    QString summary;
    QList<TuningTarget> jobs;
    for (const TuningTarget &t : d.targets) {
        if (t.upMissing || t.downMissing || t.upFellBack || t.downFellBack)
            jobs.append(t);
    }
    if (!jobs.isEmpty()) {
        int files = 0;
        QStringList devices, tritons, descs, fellBack, missingFolders, unusedFolders;
        for (const TuningTarget &t : jobs) {
            const bool up = t.upMissing || t.upFellBack;
            const bool down = TuneSpec::fromTarget(t).upAndDown;
            files += (up ? 1 : 0) + (down ? 1 : 0);
            const QString dev = deviceText(t);
            if (!devices.contains(dev))
                devices << dev;
            if (t.tritonVersion && !tritons.contains(t.tritonVersion->toString()))
                tritons << t.tritonVersion->toString();
            const QString parts = up && down ? u"up and down"_s : (up ? u"up"_s : u"down"_s);
            descs << (t.framework == Framework::VLLM ? t.shapeSummary() : t.shapeSummary() + u": "_s + parts);
            if (t.upFellBack || t.downFellBack) {
                const QString which =
                    t.upFellBack && t.downFellBack ? u"up and down"_s : (t.upFellBack ? u"up"_s : u"down"_s);
                fellBack << which + (jobs.size() == 1 ? QString() : u" of "_s + t.shapeSummary()) +
                                u" fell back to "_s + t.fallbackFolder;
            }
            if (t.tritonFolderMissing && !missingFolders.contains(t.tritonFolder))
                missingFolders << t.tritonFolder;
            else if (t.noConfigLoaded && !unusedFolders.contains(t.tritonFolder))
                unusedFolders << t.tritonFolder;
        }
        summary = QString::number(files) +
                  (files == 1 ? u" MoE config untuned on "_s : u" MoE configs untuned on "_s) +
                  devices.join(u", "_s);
        if (!tritons.isEmpty())
            summary += u" under Triton "_s + tritons.join(u", "_s);
        summary += u": "_s + QString::number(jobs.size()) +
                   (jobs.size() == 1 ? u" tuning job ("_s : u" tuning jobs ("_s);
        if (jobs.size() == 1 && jobs.front().framework != Framework::VLLM) {
            const qsizetype colon = descs.front().lastIndexOf(u": "_s);
            summary += descs.front().left(colon) + u"), "_s + descs.front().mid(colon + 2);
        } else if (descs.size() > 6) { // a person reads a few; the findings list the rest
            summary +=
                descs.first(5).join(u"; "_s) + u"; and "_s + QString::number(descs.size() - 5) + u" more)"_s;
        } else {
            summary += descs.join(u"; "_s) + u')';
        }
        if (!fellBack.isEmpty())
            summary += u"; "_s + fellBack.join(u", "_s);
        if (!missingFolders.isEmpty())
            summary += (missingFolders.size() == 1 ? u"; folder "_s : u"; folders "_s) +
                       missingFolders.join(u", "_s) +
                       (missingFolders.size() == 1 ? u" does not exist yet"_s : u" do not exist yet"_s);
        if (!unusedFolders.isEmpty())
            summary += u"; no config loaded from "_s + unusedFolders.join(u", "_s);
        int others = 0;
        for (const Finding &f : d.findings)
            others += f.severity >= Severity::Warning && !f.target && d.isLatest(f) ? 1 : 0;
        if (others > 0)
            summary += u"; "_s + QString::number(others) +
                       (others == 1 ? u" other problem"_s : u" other problems"_s);
    } else if (d.worst() >= Severity::Warning) {
        const int errors = d.count(Severity::Error);
        const int warnings = d.count(Severity::Warning);
        QStringList counts;
        if (errors)
            counts << QString::number(errors) + (errors == 1 ? u" error"_s : u" errors"_s);
        if (warnings)
            counts << QString::number(warnings) + (warnings == 1 ? u" warning"_s : u" warnings"_s);
        summary = counts.join(u", "_s) + u": "_s + d.findings.front().title; // sorted: latest start first
    } else {
        summary = u"No problems found in "_s + QString::number(d.linesRead) +
                  (d.linesRead == 1 ? u" line"_s : u" lines"_s);
        const int infos = d.count(Severity::Info);
        if (infos > 0)
            summary += u"; "_s + QString::number(infos) + (infos == 1 ? u" fact noted"_s : u" facts noted"_s);
    }
    summary += MoeKernelVerdict::summaryNote(d, !jobs.isEmpty());
    if (d.starts.size() + d.startsOmitted > 1) {
        // A followed log across restarts: the summary speaks of the server as it runs now.
        const ServerStart &latest = d.starts.back();
        summary = u"Latest of %1 server starts (from line %2): "_s.arg(d.starts.size() + d.startsOmitted)
                      .arg(latest.line) +
                  summary;
    }
    if (d.cancelled)
        summary = u"Cancelled after "_s + QString::number(d.linesRead) + u" lines; so far: "_s + summary;
    return summary;
}

} // namespace moetune
