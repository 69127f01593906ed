// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/job/tunespec.h"
#include "core/run/headroomresult.h"

#include <QGroupBox>
#include <QPointer>

#include <memory>
#include <optional>

namespace Ui {
class HeadroomBox;
}

namespace moetune {

class HeadroomFlow;

// The Tune page's headroom box (issue 19): "Check headroom" runs the agent's headroom check with the
// host session's HeadroomFlow (HostFlows::headroom()), shows its progress, then the verdict, what could not
// be seen, and per range of batch sizes the likely gain (each row's tooltip lists its sizes: server's us,
// best us, floor). The page owns the connection; the box only asks for a run (checkRequested).
class HeadroomBox : public QGroupBox {
    Q_OBJECT
public:
    explicit HeadroomBox(QWidget *parent = nullptr);
    ~HeadroomBox() override;

    // Runs the check with flow (its host's) for spec (the previous result stays until the new one comes).
    void run(HeadroomFlow *flow, const TuneSpec &spec);
    void setRunnable(bool ok, const QString &why);
    void showError(const QString &sentence);
    void showResult(const HeadroomResult &result, const QString &error = {});
    bool running() const;
    // The last result and the spec it was checked for (a tune of that spec keeps it in its run folder).
    const std::optional<HeadroomResult> &result() const { return m_result; }
    const TuneSpec &resultSpec() const { return m_resultSpec; }
    // The widgets that hold the answer, most important last (a page scrolling it into view shows them
    // in this order): the table per range, then the verdict.
    QList<QWidget *> answerWidgets() const;

signals:
    void checkRequested();
    void finished(const moetune::HeadroomResult &result, const QString &error);

private:
    std::unique_ptr<Ui::HeadroomBox> m_ui;
    QPointer<HeadroomFlow> m_flow;
    std::optional<HeadroomResult> m_result;
    TuneSpec m_resultSpec;
    TuneSpec m_running;
    bool m_runnable = false;
    bool m_checking = false; // this box's check runs (the flow is the session's, shared)
};

} // namespace moetune
