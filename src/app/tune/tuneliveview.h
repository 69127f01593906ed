// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/run/runprogress.h"

#include <QJsonObject>
#include <QWidget>

#include <memory>

namespace Ui {
class TuneLiveView;
}

namespace moetune {

class LiveBestChart;
class TuneBestModel;

// The Tune page's Run tab (ui/tuneliveview.ui): the run followed as it streams: its line, the progress
// bar and the per-GPU counts (the same units), the live chart, and the best so far per batch size next
// to the server's default.
class TuneLiveView : public QWidget {
    Q_OBJECT
public:
    explicit TuneLiveView(QWidget *parent = nullptr);
    ~TuneLiveView() override;

    TuneBestModel *bestModel() const { return m_bestModel; }
    LiveBestChart *chart() const { return m_chart; }
    void setStatus(const QString &line); // what the page is doing ("Starting a run on ...")
    void addEvent(const QJsonObject &event);
    void reset(); // another run: the table and the chart start over
    // The labels, the bar and the table as progress says (hostLabel: the host the run is on).
    void showProgress(const RunProgress &progress, const QString &hostLabel);
    void setResultsEnabled(bool enabled);

signals:
    void showResultsClicked();

private:
    std::unique_ptr<Ui::TuneLiveView> m_ui;
    TuneBestModel *m_bestModel;
    LiveBestChart *m_chart;
};

} // namespace moetune
