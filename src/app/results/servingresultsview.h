// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QWidget>

QT_BEGIN_NAMESPACE
class QPlainTextEdit;
class QLabel;
QT_END_NAMESPACE

namespace moetune {

class ServingChart;
struct WorkspaceRun;

// The Results page's "Serving before/after" tab: the serving benchmark kept with the run
// (serving.json): the verdict, the chart with intervals, the figures, the workload and the commands.
class ServingResultsView : public QWidget {
    Q_OBJECT
public:
    explicit ServingResultsView(QWidget *parent = nullptr);
    // false when the run has no (readable) serving benchmark; the view then says why.
    bool setRun(const WorkspaceRun &run);
    ServingChart *chart() const { return m_chart; }
    QString verdictText() const;

private:
    QLabel *m_verdict;
    ServingChart *m_chart;
    QPlainTextEdit *m_text;
};

} // namespace moetune
