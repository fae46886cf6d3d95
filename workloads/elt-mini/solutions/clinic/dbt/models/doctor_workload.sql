with per_doctor as (
    select
        doctor_id,
        count(*) as visits,
        count(distinct patient_id) as distinct_patients,
        sum(fee) as total_fees,
        100.0 * count(*) filter (where cast(follow_up as boolean)) / count(*) as follow_up_rate_pct,
        max(cast(visit_date as date)) as last_visit_date
    from {{ source('raw', 'visits') }}
    group by doctor_id
)
select
    d.doctor_id,
    d.name as doctor_name,
    d.specialty,
    coalesce(v.visits, 0) as visits,
    coalesce(v.distinct_patients, 0) as distinct_patients,
    coalesce(v.total_fees, 0) as total_fees,
    v.follow_up_rate_pct,
    v.last_visit_date
from {{ source('raw', 'doctors') }} as d
left join per_doctor as v on v.doctor_id = d.doctor_id
