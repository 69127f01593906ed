// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/diagnosis/diagnosis.h"
#include "core/host/hostprobe.h"
#include "core/serving/servingcomparison.h"
#include "remote/flows/pushflow.h"
#include "remote/flows/servingflow.h"

#include <QGroupBox>

class QCheckBox;
class QDoubleSpinBox;
class QSpacerItem;
#include <QPointer>

#include <functional>
#include <memory>
#include <optional>

namespace Ui {
class ServingBenchBox;
}

namespace moetune {

class ServingChart;

// The push tab's serving benchmark (ui/servingbenchbox.ui): the workload (a preset, every field
// editable), the server's address and tool, plain or rigorous mode; "Benchmark now" (the server as it
// is) and "Push, restart and compare" over ServingFlow, with live progress per leg, the before/after
// chart with intervals (ServingChart), the verdict, and Undo offered when the server got slower.
// The Tune page hands it the host session's ServingFlow and the push preview through a provider when a
// button asks; the flow is the session's (HostFlows), the box only connects to it while its run goes.
class ServingBenchBox : public QGroupBox {
    Q_OBJECT
public:
    struct Context {
        QPointer<ServingFlow> serving; // the host session's (HostFlows::serving())
        QPointer<ServerControl> server;
        Framework framework = Framework::SGLang;
        std::optional<PushFlow::Preview> preview;
        std::optional<Diagnosis> before;
        std::optional<HostProbe> probe;
        QString afterLogFile;
    };
    using Provider = std::function<std::optional<Context>()>;

    explicit ServingBenchBox(QWidget *parent = nullptr);
    ~ServingBenchBox() override;

    void setProvider(Provider provider) { m_provider = std::move(provider); }
    // Fills the server's address and tool from the probe and the profile (keeps what was typed by hand).
    void suggest(Framework framework, const HostProbe *probe, const ServerProfile &profile);
    ServingFlow::Plan plan() const;
    QString validation() const; // "" when the fields make a usable plan
    // Shows a finished comparison; pushed: the server runs the pushed files (Undo offered when slower).
    void showComparison(const ServingComparison &comparison, bool pushed = false);
    const std::optional<ServingComparison> &comparison() const { return m_comparison; }
    ServingChart *chart() const { return m_chart; }
    bool isRunning() const { return m_flow != nullptr; }

    void benchmarkNow();
    void compare();

signals:
    // A benchmark or comparison ended (kept with the run by the page).
    void finished(const moetune::ServingComparison &comparison);
    // The comparison pushed: the record of the push the server ends on, and the log proof.
    void pushedByComparison(const moetune::PushRecord &record, bool proofOk, const QString &proofSummary);
    void undoRequested();

private:
    void applyPreset(const QString &id);
    void updateValidation();
    void setRunning(bool running);
    void endRun();
    void useFlow(ServingFlow *flow); // connects the box's progress to the session's flow

    std::unique_ptr<Ui::ServingBenchBox> m_ui;
    ServingChart *m_chart;
    Provider m_provider;
    QPointer<ServingFlow> m_flow;
    std::optional<ServingComparison> m_comparison;
    bool m_loading = false; // fields being set from a preset: not an edit by hand
    bool m_addressTyped = false;
    ServingBenchCommand::AddressFrom m_addressFrom = ServingBenchCommand::AddressFrom::Host;
    QCheckBox *m_adaptiveCheck;
    QDoubleSpinBox *m_marginSpin;
    QDoubleSpinBox *m_hoursSpin;
    QSpacerItem *m_filler; // takes the chart's room when there is no chart (nothing measured)
};

} // namespace moetune
