with per_patient as (
    select
        patient_id,
        count(*) as visits,
        min(cast(visit_date as date)) as first_visit_date,
        100.0 * count(diagnosis) / count(*) as diagnosed_visits_pct
    from {{ source('raw', 'visits') }}
    group by patient_id
)
select
    p.patient_id,
    coalesce(v.visits, 0) as visits,
    v.first_visit_date,
    cast(p.smoker as boolean) as smoker,
    p.insurer is not null as insured,
    v.diagnosed_visits_pct
from {{ source('raw', 'patients') }} as p
left join per_patient as v on v.patient_id = p.patient_id
