// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/results/servingresultsview.h"

#include "charts/servingchart.h"
#include "core/run/workspacerun.h"
#include "core/serving/servingcomparison.h"

#include <QLabel>
#include <QPlainTextEdit>
#include <QVBoxLayout>

using namespace Qt::StringLiterals;

namespace moetune {

ServingResultsView::ServingResultsView(QWidget *parent)
    : QWidget(parent)
    , m_verdict(new QLabel(this))
    , m_chart(new ServingChart(this))
    , m_text(new QPlainTextEdit(this)) {
    setObjectName(u"servingResultsView"_s);
    m_verdict->setObjectName(u"servingVerdictLabel"_s);
    m_verdict->setWordWrap(true);
    m_verdict->setTextInteractionFlags(Qt::TextSelectableByMouse);
    QFont bold = m_verdict->font();
    bold.setBold(true);
    m_verdict->setFont(bold);
    m_text->setReadOnly(true);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_verdict);
    layout->addWidget(m_chart, 3);
    layout->addWidget(m_text, 2);
}

QString ServingResultsView::verdictText() const {
    return m_verdict->text();
}

bool ServingResultsView::setRun(const WorkspaceRun &run) {
    m_chart->clear();
    m_text->clear();
    if (!run.serving) {
        m_verdict->setText(tr("No serving benchmark was kept with this run (Push and proof: \"Push, restart "
                              "and compare\", or moetune-cli push --restart --bench)."));
        return false;
    }
    QString error;
    const auto c = ServingComparison::fromJson(*run.serving, &error);
    if (!c) {
        m_verdict->setText(tr("serving.json of this run is unreadable: %1").arg(error));
        return false;
    }
    const ServingComparison::Verdict v = c->verdict();
    QString line = c->verdictSentence();
    if (const QString see = c->sensitivitySentence(); !see.isEmpty())
        line += u'\n' + see;
    m_verdict->setText(line);
    // Nothing measured: no chart of n/a rows, only the reason (and the commands to try by hand).
    m_chart->setVisible(v != ServingComparison::Verdict::Failed);
    if (v != ServingComparison::Verdict::Failed)
        m_chart->setComparison(*c);
    m_text->setPlainText(c->text() + tr("Commands:\n") + c->manualCommands().join(u'\n'));
    return true;
}

} // namespace moetune
